package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// This file is the routes by which the workload feeds its checks: the
// beats of heartbeats, which may say how it is, and the units of work of
// watchdogs.

// beat beats a heartbeat. A beat that says nothing passes it (Beat); one
// that gives a Beat, as a JSON body or as query parameters, says what it
// gives (Report).
func (s *Server) beat(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	hb := fedCheck(s, w, s.fed.Heartbeat, name, "heartbeat", "there is nothing to beat")
	if hb == nil {
		return
	}
	b, err := beatOf(w, r)
	var report health.Report
	if err == nil {
		report, err = reportOf(b)
	}
	switch {
	case err != nil:
	case report == health.Report{Status: health.Pass}:
		hb.Beat() // the happy path: nothing but the time, never limited
	case s.limited(w, r, s.reports, "beats that say something"):
		return
	default:
		err = hb.Report(report)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "beat of check %q: %v", name, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// beatParams are the query parameters of a beat: Beat's keys.
var beatParams = []string{"status", "output", "observedValue", "observedUnit"}

// beatOf reads what a beat says: its JSON body, or its query parameters,
// not both; none says nothing.
func beatOf(w http.ResponseWriter, r *http.Request) (client.Beat, error) {
	var b client.Beat
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return b, fmt.Errorf("read the body: %w", err)
	}
	q := r.URL.Query()
	if len(bytes.TrimSpace(body)) > 0 {
		if len(q) > 0 {
			return b, errors.New("give what it says in a JSON body or in the query, not both")
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil {
			return b, fmt.Errorf(`want a body {"status": "pass|warn|fail", "output": "...", "observedValue": N, "observedUnit": "..."}: %w`, err)
		}
		return b, nil
	}
	for key := range q {
		if !slices.Contains(beatParams, key) {
			return b, fmt.Errorf("unknown parameter %q (want status, output, observedValue, observedUnit)", key)
		}
	}
	b.Status, b.Output, b.ObservedUnit = q.Get("status"), q.Get("output"), q.Get("observedUnit")
	if q.Has("observedValue") {
		v, err := strconv.ParseFloat(q.Get("observedValue"), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return b, fmt.Errorf("observedValue %q is not a finite number", q.Get("observedValue"))
		}
		b.ObservedValue = &v
	}
	return b, nil
}

// reportOf is what b says, as a heartbeat takes it.
func reportOf(b client.Beat) (health.Report, error) {
	r := health.Report{Status: health.Pass, Output: b.Output, Unit: b.ObservedUnit}
	switch b.Status {
	case "", "pass":
	case "warn":
		r.Status = health.Warn
	case "fail":
		r.Status = health.Fail
	default:
		return r, fmt.Errorf("status %q: want pass, warn or fail", b.Status)
	}
	switch {
	case b.ObservedValue != nil && b.ObservedUnit == "":
		return r, fmt.Errorf("observedValue %v needs its observedUnit, such as ms", *b.ObservedValue)
	case b.ObservedValue == nil && b.ObservedUnit != "":
		return r, fmt.Errorf("observedUnit %q without an observedValue", b.ObservedUnit)
	case b.ObservedValue != nil:
		r.Value = *b.ObservedValue
	}
	return r, nil
}

// beginWork begins a unit of work on a watchdog, and answers with its id.
func (s *Server) beginWork(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	wd := fedCheck(s, w, s.fed.Watchdog, name, "watchdog", "it has no units of work")
	if wd == nil {
		return
	}
	id, err := wd.BeginID()
	if err != nil {
		writeError(w, http.StatusConflict, "%v: end one (DELETE /v1/checks/%s/work/ID), or restart the workload, whose units end with it", err, name)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("/v1/checks/%s/work/%d", name, id))
	writeJSON(w, http.StatusCreated, client.Unit{ID: id})
}

// endWork ends a unit of work that beginWork began.
func (s *Server) endWork(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	wd := fedCheck(s, w, s.fed.Watchdog, name, "watchdog", "it has no units of work")
	if wd == nil {
		return
	}
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil || id == 0 {
		writeError(w, http.StatusBadRequest, "unit of work %q: want the id that POST /v1/checks/%s/work answered, a number from 1", r.PathValue("id"), name)
		return
	}
	if !wd.End(id) { // gone rather than unknown: a client tells it from no such check
		writeError(w, http.StatusGone, "no unit of work %d is running on check %q: it has ended, or the workload has restarted since it began (its units end with it)", id, name)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// fedCheck is the check named name that find finds, among those of a kind
// the workload feeds (heartbeat, watchdog). When there is none it answers 404
// for no such check, or 409 for a check of another kind, saying what it
// lacks, and returns nil.
func fedCheck[T any](s *Server, w http.ResponseWriter, find func(string) *T, name, kind, lacks string) *T {
	if c := find(name); c != nil {
		return c
	}
	if st, ok := s.m.CheckState(name); ok {
		writeError(w, http.StatusConflict, "check %q is a %s check, not a %s: %s", name, st.Kind, kind, lacks)
	} else {
		writeError(w, http.StatusNotFound, "no such check %q", name)
	}
	return nil
}

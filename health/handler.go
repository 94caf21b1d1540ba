package health

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Handler serves the probe endpoints from the Monitor's state:
//
//	/livez /readyz /startupz   200 "ok" or 503 with the verbose text
//	/healthz                   the same as /livez (controller-runtime's name)
//	/livez/NAME ...            one check: 200 "ok", or its line and 503 when it fails the endpoint
//
// Query parameters: verbose (with any value) lists every check even on
// success, in the kube-apiserver's text format; exclude=NAME (repeatable)
// leaves a check out; format=json answers in the IETF health check response
// format (application/health+json), and so does an Accept header that names
// application/health+json or application/json (with a q above 0), the
// latter alone as application/json, the type it asked for; format=text
// answers in text whatever Accept says. Accept: */* (the kubelet's) gets text.
// GET and HEAD are served, other methods get 405. Answers are never cached.
//
// The JSON format gives the status, the service's serviceId, version and
// releaseId (WithServiceInfo), and each check's status, time, output,
// componentType (Check.ComponentType) and, unless WithDetails(false),
// observedValue with its observedUnit.
//
// The handler never runs a check and never waits on one: it reads the state
// the checks' last results left, so it is safe to hit thousands of times a
// second. The paths are matched exactly; mount the handler at the root of a
// mux, or behind http.StripPrefix.
func (m *Monitor) Handler() http.Handler { return handler{m: m} }

// HandlerWithDetails is Handler with the details decided for each request
// in place of WithDetails: show(r) says whether r is told why checks fail
// and their observed values; where it says false, each reason reads "reason
// withheld", as the kube-apiserver answers whoever may not see more, while
// the status codes and the checks' names stay. A server that serves the
// public and its own operators alike decides by who asks: a client on
// loopback, or one that proved who it is (r.TLS, a token).
//
// show is called only for the answers that would carry a reason or a value:
// the probe's path (a passing level, no query) never calls it and stays
// allocation-free. show must be safe to call from many goroutines at once.
func (m *Monitor) HandlerWithDetails(show func(r *http.Request) bool) http.Handler {
	return handler{m: m, show: show}
}

type handler struct {
	m    *Monitor
	show func(*http.Request) bool // nil: m.details for every request
}

// Header values are shared slices so that the common answer allocates nothing.
var (
	textPlain   = []string{"text/plain; charset=utf-8"}
	healthJSON  = []string{"application/health+json"}
	plainJSON   = []string{"application/json"}
	noStore     = []string{"no-store"}
	nosniff     = []string{"nosniff"}
	allowedVerb = []string{"GET, HEAD"}
	okBody      = []byte("ok")
)

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr["Cache-Control"] = noStore
	ep, name, found := route(r.URL.Path)
	if !found {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr["Allow"] = allowedVerb
		http.Error(w, fmt.Sprintf("method %s not allowed: use GET or HEAD", r.Method), http.StatusMethodNotAllowed)
		return
	}
	hdr["X-Content-Type-Options"] = nosniff
	v := h.m.view.Load()
	jsonType := acceptedJSON(r.Header)
	wantJSON := jsonType != nil
	// The probe's path: no query, no JSON, a passing level. One atomic load.
	if name == "" && r.URL.RawQuery == "" && !wantJSON && v.passing[ep.level] {
		hdr["Content-Type"] = textPlain
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(okBody)
		}
		return
	}

	q := r.URL.Query()
	switch f := q.Get("format"); f {
	case "":
	case "json":
		wantJSON = true
		if jsonType == nil {
			jsonType = healthJSON
		}
	case "text":
		wantJSON = false
	default:
		http.Error(w, fmt.Sprintf("unknown format %q: use json or text", f), http.StatusBadRequest)
		return
	}
	details := h.m.details.Load()
	if h.show != nil {
		details = h.show(r)
	}
	rep := v.report(ep, q["exclude"], details, h.m.clock.Now())
	rep.service = *h.m.service.Load()
	var body []byte
	var code int
	if name != "" {
		ln, ok := rep.find(name)
		if !ok {
			http.Error(w, fmt.Sprintf("no check %q on /%s", name, ep.name), http.StatusNotFound)
			return
		}
		rep.lines, rep.ok, rep.unknown = []line{ln}, ln.ok, nil
		code, body = rep.code(), rep.single(wantJSON)
	} else {
		code, body = rep.code(), rep.body(wantJSON, q.Has("verbose"))
	}
	if wantJSON {
		hdr["Content-Type"] = jsonType
	} else {
		hdr["Content-Type"] = textPlain
	}
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// route splits "/readyz" and "/readyz/NAME".
func route(path string) (ep endpoint, name string, found bool) {
	switch path { // the probes' paths first, without splitting
	case "/readyz":
		return readyz, "", true
	case "/livez":
		return livez, "", true
	case "/healthz":
		return healthz, "", true
	case "/startupz":
		return startupz, "", true
	}
	first, name, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	switch first {
	case "livez":
		ep = livez
	case "readyz":
		ep = readyz
	case "startupz":
		ep = startupz
	case "healthz":
		ep = healthz
	default:
		return endpoint{}, "", false
	}
	if strings.HasSuffix(path, "/") {
		return endpoint{}, "", false // "/readyz/" names no check
	}
	return ep, name, true
}

// acceptedJSON is the Content-Type of the JSON answer that an Accept header
// asks for, nil when it asks for none: application/health+json when it names
// that type, else application/json when it names that one. A client that
// asks for application/json alone gets that type back, not health+json,
// since such clients (HTTP libraries, monitoring tools, API gateways) check
// the answer's type against the one they asked for before they decode it;
// the body is the same document. A type given q=0 is refused, not asked
// for; wildcards (*/*, the kubelet's, and application/*) ask for no JSON, so
// that the probes keep their text.
//
// It reads the header map directly, since the server has canonicalised the
// key and Header.Get would do it again on every probe, and allocates
// nothing: it is on the probe's path.
func acceptedJSON(h http.Header) []string {
	var found []string
	for _, a := range h["Accept"] {
		for a != "" {
			var r string
			r, a, _ = strings.Cut(a, ",")
			typ, params, _ := strings.Cut(r, ";")
			typ = strings.TrimSpace(typ)
			switch {
			case refused(params):
			case strings.EqualFold(typ, "application/health+json"):
				return healthJSON
			case strings.EqualFold(typ, "application/json"):
				found = plainJSON
			}
		}
	}
	return found
}

// refused reports whether the parameters of a media range in an Accept
// header give it q=0: "not acceptable" (RFC 9110, section 12.4.2).
func refused(params string) bool {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		name, value, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		// A qvalue is 0, 0., 0.0, 0.00 or 0.000 when it is zero.
		value = strings.TrimSpace(value)
		if rest, ok := strings.CutPrefix(value, "0"); ok {
			rest, _ = strings.CutPrefix(rest, ".")
			return strings.Trim(rest, "0") == ""
		}
		return false
	}
	return false
}

func (rep report) code() int {
	if rep.ok {
		return http.StatusOK
	}
	return http.StatusServiceUnavailable
}

func (rep report) find(name string) (line, bool) {
	for _, ln := range rep.lines {
		if ln.name == name {
			return ln, true
		}
	}
	return line{}, false
}

// body is the aggregate answer: "ok" on success unless verbose; otherwise a
// line per check and a trailer, as the kube-apiserver writes them.
func (rep report) body(asJSON, verbose bool) []byte {
	if asJSON {
		return rep.json()
	}
	if rep.ok && !verbose {
		return okBody
	}
	var b bytes.Buffer
	b.Grow(48 * (len(rep.lines) + 1))
	for _, ln := range rep.lines {
		ln.writeText(&b)
	}
	if len(rep.unknown) > 0 {
		b.WriteString("warn: " + rep.unknownNote() + "\n")
	}
	b.WriteString(rep.endpoint.name)
	if rep.ok {
		b.WriteString(" check passed\n")
	} else {
		b.WriteString(" check failed\n")
	}
	return b.Bytes()
}

// single is the answer of a per-check path: "ok" when the check does not fail
// the endpoint, otherwise its line.
func (rep report) single(asJSON bool) []byte {
	if asJSON {
		return rep.json()
	}
	ln := rep.lines[0]
	if ln.ok {
		return okBody
	}
	var b bytes.Buffer
	ln.writeText(&b)
	return b.Bytes()
}

// unknownNote is the kube-apiserver's warning for excluded names that match
// nothing.
func (rep report) unknownNote() string {
	quoted := make([]string, len(rep.unknown))
	for i, name := range rep.unknown {
		quoted[i] = fmt.Sprintf("%q", name)
	}
	return "some health checks cannot be excluded: no matches for " + strings.Join(quoted, ",")
}

func (ln line) writeText(b *bytes.Buffer) {
	if ln.ok {
		b.WriteString("[+]")
	} else {
		b.WriteString("[-]")
	}
	b.WriteString(ln.name)
	switch {
	case ln.excluded:
		b.WriteString(" excluded: ok")
	case ln.word == "ok":
		b.WriteString(" ok")
	default:
		b.WriteByte(' ')
		b.WriteString(ln.word)
		b.WriteString(": ")
		b.WriteString(ln.reason)
	}
	b.WriteByte('\n')
}

// healthResponse is the IETF draft's health check response
// (draft-inadarei-api-health-check-06), served as application/health+json,
// its fields in the draft's order.
type healthResponse struct {
	Status    string                   `json:"status"`
	Version   string                   `json:"version,omitempty"`
	ReleaseID string                   `json:"releaseId,omitempty"`
	Notes     []string                 `json:"notes,omitempty"`
	Output    string                   `json:"output,omitempty"`
	ServiceID string                   `json:"serviceId,omitempty"`
	Checks    map[string][]checkResult `json:"checks,omitempty"`
}

type checkResult struct {
	Status        string `json:"status"`
	Time          string `json:"time,omitempty"`
	Output        string `json:"output,omitempty"`
	ObservedValue any    `json:"observedValue,omitempty"`
	ObservedUnit  string `json:"observedUnit,omitempty"`
	ComponentType string `json:"componentType,omitempty"`
}

func (rep report) json() []byte {
	res := healthResponse{Status: "pass", Version: rep.service.Version, ReleaseID: rep.service.ReleaseID,
		ServiceID: rep.service.ServiceID, Checks: map[string][]checkResult{}}
	for _, ln := range rep.lines {
		if ln.excluded || ln.e == nil && ln.ok || ln.word == "stopped" {
			continue // the shutdown line shows in JSON only while draining
		}
		cr := checkResult{Status: "pass"}
		switch {
		case !ln.ok:
			cr.Status, cr.Output = "fail", ln.reason
		case ln.word == "warn":
			cr.Status, cr.Output = "warn", ln.reason
		case ln.word == "pending": // a pending live check: passing, but say so
			cr.Status, cr.Output = "warn", ln.word+": "+ln.reason
		}
		if ln.e == nil { // a line of the endpoint's own
			if !ln.ok {
				res.Output = ln.reason
			}
		} else {
			cr.ComponentType = ln.e.check.ComponentType
			if ln.v.ran {
				at := ln.e.lastAt.Load()
				cr.Time = time.Unix(0, at).UTC().Format(time.RFC3339Nano)
				// A value is served with its unit or not at all: a number
				// without one cannot be read (12 ms, or 12 s?).
				if obs := ln.e.lastObs.Load(); rep.details && obs != nil && obs.unit != "" {
					cr.ObservedValue, cr.ObservedUnit = obs.value, obs.unit
				}
			}
		}
		if cr.Status == "warn" && res.Status == "pass" {
			res.Status = "warn"
		}
		res.Checks[ln.name] = []checkResult{cr}
	}
	if !rep.ok {
		res.Status = "fail"
		if res.Output == "" {
			res.Output = rep.endpoint.name + " check failed"
		}
	}
	if len(rep.unknown) > 0 {
		res.Notes = append(res.Notes, rep.unknownNote())
	}
	b, err := json.Marshal(res)
	if err != nil {
		// An observed value that cannot be encoded: answer without values
		// (and so without their units) rather than not at all.
		for name, crs := range res.Checks {
			crs[0].ObservedValue, crs[0].ObservedUnit = nil, ""
			res.Checks[name] = crs
		}
		b, _ = json.Marshal(res)
	}
	return append(b, '\n')
}

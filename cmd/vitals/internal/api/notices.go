package api

import (
	"net/http"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// notify records the notice of the body, and answers with its event: a
// new one, or the one it repeats within repeatAfter
// (health.Monitor.NotifyRepeating), with its occurrences. One that
// health.ValidateNotice refuses is a 400 that says why, and one beyond the
// limits a 429; neither records anything.
func (s *Server) notify(w http.ResponseWriter, r *http.Request) {
	var req client.Notice
	if err := decode(w, r, &req); err != nil {
		writeError(w, http.StatusBadRequest, `want a body {"key": KEY, "data": {NAME: VALUE...}, "repeatAfter": DURATION}, the values strings: %v`, err)
		return
	}
	var within time.Duration
	if req.RepeatAfter != "" {
		d, err := time.ParseDuration(req.RepeatAfter)
		if err != nil || d < 0 {
			writeError(w, http.StatusBadRequest, "repeatAfter %q: want a duration such as 1m, or none", req.RepeatAfter)
			return
		}
		within = d
	}
	if err := health.ValidateNotice(req.Key, req.Data); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	// After the checks: a request that records nothing takes no share.
	if s.limited(w, r, s.notices, "notices") {
		return
	}
	e, _, err := s.m.NotifyRepeating(req.Key, req.Data, within)
	if err != nil { // a *health.NoticeError: the only error Notify has
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if s.noticed != nil { // a repeat is a notice too, counted as one
		s.noticed(e)
	}
	writeJSON(w, http.StatusOK, e)
}

package api

import (
	"net/http"

	"github.com/vitals-dev/vitals/client"
)

// notify records the notice of the body, and answers with its event; one
// that health.ValidateNotice refuses is a 400 that says why, and records
// nothing.
func (s *Server) notify(w http.ResponseWriter, r *http.Request) {
	var req client.Notice
	if err := decode(w, r, &req); err != nil {
		writeError(w, http.StatusBadRequest, `want a body {"key": KEY, "data": {NAME: VALUE...}}, the values strings: %v`, err)
		return
	}
	e, err := s.m.Notify(req.Key, req.Data)
	if err != nil { // a *health.NoticeError: the only error Notify has
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if s.noticed != nil {
		s.noticed(e)
	}
	writeJSON(w, http.StatusOK, e)
}

// Package api is the agent's management API: JSON over HTTP, on a unix socket
// (mode 0600, so that only its owner can stop checks) or on TCP behind a bearer
// token. The server reads and drives the agent's health.Monitor; its JSON is
// the wire types of the public package client, which the CLI's commands
// use to call it. The agent wires the server; this package imports nothing
// of the agent.
//
//	GET  /v1/checks[?level=L]        every check (a JSON array of Check)
//	GET  /v1/checks/NAME             one check, with its kept results
//	POST /v1/checks/NAME/run         run it now; the answer is the Result
//	POST /v1/checks/NAME/beat        beat a heartbeat (204); a Beat, in the body or the query, says pass, warn or fail
//	POST /v1/checks/NAME/work        begin a unit of work on a watchdog; the answer (201) is its Unit
//	DELETE /v1/checks/NAME/work/ID   end it (204)
//	POST /v1/checks/stop, /start     {"checks": [NAME...]}: stop or start checks
//	GET  /v1/health[?level=L]        a level's verdict (default ready)
//	GET  /v1/events?after=ID[&wait=D] events after ID; with wait, block up to D for one
//	POST /v1/notices                 {"key": KEY, "data": {NAME: VALUE}, "repeatAfter": D}: record a notice; the answer is its event
//	POST /v1/services/NAME/restart   restart that service at once; the answer is its service-started event
//	POST /v1/service/restart         the same for the agent's one service (400 when it runs several)
//	GET  /v1/hooks                   the hooks and how their deliveries go
//	POST /v1/reload                  read the file again and apply what changed (client.Reloaded)
//
// /v1/events with Accept: text/event-stream streams events as server-sent
// events, each with its id, resuming after Last-Event-ID. Errors are
// {"error": "..."} (client.Error): 400 a bad parameter or body (a notice
// that health.ValidateNotice refuses, a restart of the one service of an
// agent that runs several), 401 a missing or wrong token, 429 a notice or a
// beat that says something beyond the API's Limits (with Retry-After), 404 an unknown
// check, service or path (or no workload to restart, or no file to
// reload), 410 a unit of work
// that is not running (it ended, or the workload restarted), 405 a wrong
// method, 409 a beat of a check that is no heartbeat, work on a check that
// is no watchdog, a unit of work past health.MaxUnitIDs, or a restart of a
// service that is not running.
package api

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/wire"
	"github.com/vitals-dev/vitals/health"
)

const (
	// MaxWait caps the wait of GET /v1/events: a longer one answers [] at
	// MaxWait, and the client asks again, as it must after any wait.
	MaxWait = 5 * time.Minute
	// maxBody caps a request body: a list of check names, a notice, a beat.
	maxBody = 1 << 20
	// maxUnknown is how many unknown names a 404 quotes: enough to see the
	// typo, and an answer that stays small whatever the request names.
	maxUnknown = 10
)

// Server serves the API over one Monitor. Make one with New.
type Server struct {
	m        *health.Monitor
	fed      Fed
	token    string
	services []Service
	hooks    func() []client.Hook
	noticed  func(health.Event)
	mux      *http.ServeMux
	reload   func() (client.Reloaded, error)
	// notices and reports bound how fast notices and beats that say
	// something come (Limits).
	notices, reports *limiter
}

// Fed is the checks the workload feeds through the API, by name: the
// heartbeats, which POST .../beat beats, and the watchdogs, whose units of
// work POST .../work begins and DELETE .../work/ID ends. Each returns nil
// for a name that is not one of its kind. The agent's change with a reload
// of its file.
type Fed interface {
	Heartbeat(name string) *health.Heartbeat
	Watchdog(name string) *health.Watchdog
}

// FedChecks is a Fed of two maps, which do not change once given.
type FedChecks struct {
	Heartbeats map[string]*health.Heartbeat
	Watchdogs  map[string]*health.Watchdog
}

// Heartbeat is the heartbeat of that name, or nil.
func (f *FedChecks) Heartbeat(name string) *health.Heartbeat { return f.Heartbeats[name] }

// Watchdog is the watchdog of that name, or nil.
func (f *FedChecks) Watchdog(name string) *health.Watchdog { return f.Watchdogs[name] }

// New returns the API over m, whose checks fed feeds (nil: none). With a token, every request must carry
// "Authorization: Bearer TOKEN" (the TCP API); without one, whoever reaches
// the handler is trusted (the unix socket, which its mode guards).
//
// A long wait or an event stream ends when its request's context does; the
// agent ends them at shutdown through http.Server.BaseContext.
func New(m *health.Monitor, fed Fed, token string, opts ...Option) *Server {
	if fed == nil {
		fed = &FedChecks{}
	}
	s := &Server{m: m, fed: fed, token: token, mux: http.NewServeMux()}
	WithLimits(DefaultLimits)(s)
	for _, o := range opts {
		o(s)
	}
	s.mux.HandleFunc("GET /v1/checks", s.listChecks)
	s.mux.HandleFunc("GET /v1/checks/{name}", s.getCheck)
	s.mux.HandleFunc("POST /v1/checks/{name}/run", s.run)
	s.mux.HandleFunc("POST /v1/checks/{name}/beat", s.beat)
	s.mux.HandleFunc("POST /v1/checks/{name}/work", s.beginWork)
	s.mux.HandleFunc("DELETE /v1/checks/{name}/work/{id}", s.endWork)
	s.mux.HandleFunc("POST /v1/checks/stop", s.stopOrStart(false))
	s.mux.HandleFunc("POST /v1/checks/start", s.stopOrStart(true))
	s.mux.HandleFunc("GET /v1/health", s.health)
	s.mux.HandleFunc("GET /v1/events", s.events)
	s.mux.HandleFunc("POST /v1/notices", s.notify)
	s.mux.HandleFunc("POST /v1/services/{name}/restart", s.restartNamed)
	s.mux.HandleFunc("POST /v1/service/restart", s.restartTheOne)
	s.mux.HandleFunc("GET /v1/hooks", s.listHooks)
	s.mux.HandleFunc("POST /v1/reload", s.reloadFile)
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if s.token != "" {
		got, ok := bearer(r.Header.Get("Authorization"))
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="vitals"`)
			msg := "wrong bearer token"
			if !ok {
				msg = "this API needs a bearer token: Authorization: Bearer TOKEN"
			}
			writeError(w, http.StatusUnauthorized, "%s", msg)
			return
		}
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		s.unrouted(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// unrouted answers a request that no route takes, as the mux would (404, 405
// with Allow, a redirect to a cleaned path), but with a JSON error.
func (s *Server) unrouted(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{header: http.Header{}}
	s.mux.ServeHTTP(rec, r)
	switch rec.code {
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", rec.header.Get("Allow"))
		writeError(w, rec.code, "method %s not allowed on %s: use %s", r.Method, r.URL.Path, rec.header.Get("Allow"))
	case http.StatusNotFound:
		writeError(w, rec.code, "no such path: %s", r.URL.Path)
	default:
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.code)
	}
}

// recorder keeps the status and headers of what the mux answers on its own.
type recorder struct {
	header http.Header
	code   int
}

func (rec *recorder) Header() http.Header         { return rec.header }
func (rec *recorder) Write(b []byte) (int, error) { return len(b), nil }
func (rec *recorder) WriteHeader(code int)        { rec.code = code }

func (s *Server) listChecks(w http.ResponseWriter, r *http.Request) {
	level, ok := levelParam(w, r)
	if !ok {
		return
	}
	out := []client.Check{}
	for _, st := range s.m.Snapshot().Checks {
		if level == 0 || st.Level == level {
			out = append(out, wire.Check(st, false))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getCheck(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	st, ok := s.m.CheckState(name)
	if !ok {
		writeError(w, http.StatusNotFound, "no such check %q", name)
		return
	}
	writeJSON(w, http.StatusOK, wire.Check(st, true))
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	// A client that goes away must not turn the run into a failure
	// ("cancelled after …") that counts toward the check's threshold: the run
	// ends at the check's own timeout.
	res, err := s.m.RunNow(context.WithoutCancel(r.Context()), name)
	if errors.Is(err, health.ErrNoSuchCheck) {
		writeError(w, http.StatusNotFound, "no such check %q", name)
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "run check %q: %v", name, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.Result(res))
}

// stopOrStart stops or starts every named check, or none of them when a name
// is unknown. A name given twice is acted on and answered once, so that the
// answer is at most one Check per check of the agent, however long the
// request; of unknown names, the 404 quotes the first maxUnknown.
func (s *Server) stopOrStart(start bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req client.Names
		if err := decode(w, r, &req); err != nil {
			writeError(w, http.StatusBadRequest, `want a body {"checks": [NAME...]}: %v`, err)
			return
		}
		if len(req.Checks) == 0 {
			writeError(w, http.StatusBadRequest, `no checks named: want a body {"checks": [NAME...]}`)
			return
		}
		names := distinct(req.Checks)
		var unknown []string
		for _, name := range names {
			if _, ok := s.m.CheckState(name); !ok {
				unknown = append(unknown, strconv.Quote(name))
			}
		}
		if len(unknown) > 0 {
			more := ""
			if len(unknown) > maxUnknown {
				more = fmt.Sprintf(" and %d more", len(unknown)-maxUnknown)
				unknown = unknown[:maxUnknown]
			}
			writeError(w, http.StatusNotFound, "no such check %s%s: nothing was changed", strings.Join(unknown, ", "), more)
			return
		}
		out := make([]client.Check, 0, len(names))
		for _, name := range names {
			act := s.m.StopCheck
			if start {
				act = s.m.StartCheck
			}
			if err := act(name); err != nil { // removed meanwhile; the agent never removes
				writeError(w, http.StatusNotFound, "%v", err)
				return
			}
			st, _ := s.m.CheckState(name)
			out = append(out, wire.Check(st, false))
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// distinct is names without repeats, in the order each first appears.
func distinct(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := names[:0:0]
	for _, name := range names {
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	level, ok := levelParam(w, r)
	if !ok {
		return
	}
	if level == 0 {
		level = health.Ready // the level that needs all the others
	}
	h := client.Health{Level: level, OK: true}
	if err := s.m.Checker(level)(r); err != nil {
		h.OK, h.Reason = false, err.Error()
	}
	writeJSON(w, http.StatusOK, h)
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, err := wire.Cursor(q.Get("after"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "after: %v", err)
		return
	}
	if wire.WantsStream(r) {
		// Each event with its id, so that a browser's EventSource resumes
		// after the last one it saw when it reconnects.
		if err := wire.Stream(w, r, s.m, after, nil); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
		}
		return
	}
	var wait time.Duration
	if q.Has("wait") {
		if wait, err = time.ParseDuration(q.Get("wait")); err != nil || wait < 0 {
			writeError(w, http.StatusBadRequest, "wait %q: want a duration such as 30s", q.Get("wait"))
			return
		}
	}
	// Without a wait, the context has ended already: Next answers what there
	// is at once. An error is the wait ending with nothing: [].
	ctx, cancel := context.WithTimeout(r.Context(), min(wait, MaxWait))
	evs, _, err := s.m.Follow(after).Next(ctx)
	cancel()
	if err != nil {
		evs = []health.Event{}
	}
	writeJSON(w, http.StatusOK, evs)
}

// levelParam reads ?level=; 0 when absent. It answers 400 itself.
func levelParam(w http.ResponseWriter, r *http.Request) (health.Level, bool) {
	q := r.URL.Query().Get("level")
	if q == "" {
		return 0, true
	}
	l, err := health.ParseLevel(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, "level: %v", err)
		return 0, false
	}
	return l, true
}

// decode reads a request's JSON body into v: at most maxBody, no field that
// v does not have.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func writeJSON(w http.ResponseWriter, code int, v any) { wire.WriteJSON(w, code, v) }

func writeError(w http.ResponseWriter, code int, format string, args ...any) {
	wire.WriteError(w, code, format, args...)
}

// bearer reads the token of an Authorization header; the scheme's name is
// case-insensitive (RFC 7235).
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// ReloadRefused is the error of a reload whose file was refused (nothing
// changed): POST /v1/reload answers it 400. Any other error of a reload
// (one cut short: vitals is stopping) is a 503.
type ReloadRefused struct{ Err error }

func (e *ReloadRefused) Error() string { return e.Err.Error() }
func (e *ReloadRefused) Unwrap() error { return e.Err }

// reloadFile reads the agent's file again and applies it: 200 with what
// changed, 400 with every reason it was refused, one a line, or 503 when
// it was cut short.
func (s *Server) reloadFile(w http.ResponseWriter, r *http.Request) {
	if s.reload == nil {
		writeError(w, http.StatusNotFound, "this agent has no file to reload: vitals run was given none, or read it from stdin")
		return
	}
	out, err := s.reload()
	var refused *ReloadRefused
	switch {
	case errors.As(err, &refused):
		writeError(w, http.StatusBadRequest, "%v", err)
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "%v", err)
	default:
		writeJSON(w, http.StatusOK, out)
	}
}

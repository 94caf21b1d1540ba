package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// Service is one of the services the agent supervises, as POST
// /v1/services/NAME/restart drives it. The agent's supervisors are.
type Service interface {
	// Name is what events and the route call the service.
	Name() string
	// Current is the run that runs now, and whether one runs.
	Current() (run int, running bool)
	// RestartNow restarts run at once, without the backoff's delay: a
	// restart by hand. It reports false when that run is not the one
	// running, or a stop or restart is under way.
	RestartNow(reason string, run int) bool
}

// Option configures a Server.
type Option func(*Server)

// WithReload serves POST /v1/reload: reload reads the agent's file again
// and applies it, or says why not (a 400 with its message: nothing
// changed). Without it, the route answers 404.
func WithReload(reload func() (client.Reloaded, error)) Option {
	return func(s *Server) { s.reload = reload }
}

// WithLimits sets how fast notices and beats that say something are taken
// (DefaultLimits without it).
func WithLimits(l Limits) Option {
	return func(s *Server) {
		s.notices = newLimiter(l.NoticesPerClient, l.Notices)
		s.reports = newLimiter(l.ReportsPerClient, l.Reports)
	}
}

// WithServices gives the Server the services the agent supervises, in their
// start order: POST /v1/services/NAME/restart restarts the one named, and
// POST /v1/service/restart the only one (400 when there are several).
// Without any, both answer 404: the agent runs no workload.
func WithServices(services []Service) Option { return func(s *Server) { s.services = services } }

// WithHooks gives the Server what GET /v1/hooks answers: the hooks' states.
// Without it, that path answers [].
func WithHooks(status func() []client.Hook) Option { return func(s *Server) { s.hooks = status } }

// WithNoticed gives the Server a function told of every notice POST
// /v1/notices records, once it is in the log: the metrics count them.
func WithNoticed(f func(health.Event)) Option { return func(s *Server) { s.noticed = f } }

// restartReason is what the service-exited event of a restart by hand says.
const restartReason = "restart requested"

// noWorkload is the 404 of a restart on an agent that runs no service.
const noWorkload = "this agent runs no workload (give service: or services: in its file, or a command after --)"

// restartNamed restarts the service the path names.
func (s *Server) restartNamed(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	for _, sv := range s.services {
		if sv.Name() == name {
			s.restart(w, r, sv)
			return
		}
	}
	if len(s.services) == 0 {
		writeError(w, http.StatusNotFound, "no service %q: %s", name, noWorkload)
		return
	}
	writeError(w, http.StatusNotFound, "no service %q: this agent runs %s", name, s.serviceNames())
}

// restartTheOne restarts the agent's one service: with several, the
// request must name one.
func (s *Server) restartTheOne(w http.ResponseWriter, r *http.Request) {
	switch len(s.services) {
	case 0:
		writeError(w, http.StatusNotFound, "no service: %s", noWorkload)
	case 1:
		s.restart(w, r, s.services[0])
	default:
		writeError(w, http.StatusBadRequest, "this agent runs %d services: name one (vitals restart NAME, POST /v1/services/NAME/restart): %s",
			len(s.services), s.serviceNames())
	}
}

// serviceNames are the services' names, in their start order, for an
// error that says which there are.
func (s *Server) serviceNames() string {
	names := make([]string, len(s.services))
	for i, sv := range s.services {
		names[i] = sv.Name()
	}
	return strings.Join(names, ", ")
}

// restart restarts sv at once and answers, once it runs again, with its
// service-started event.
func (s *Server) restart(w http.ResponseWriter, r *http.Request, sv Service) {
	name := sv.Name()
	run, running := sv.Current()
	if !running {
		writeError(w, http.StatusConflict, "%s is not running: it is between an exit and its restart, or has stopped", name)
		return
	}
	follower := s.m.Follow(s.m.LastEventID())
	if !sv.RestartNow(restartReason, run) {
		writeError(w, http.StatusConflict, "%s is being stopped or restarted already", name)
		return
	}
	// Answer with the new run's start: the client knows it is back.
	ctx, cancel := context.WithTimeout(r.Context(), MaxWait)
	defer cancel()
	for {
		evs, _, err := follower.Next(ctx)
		if err != nil {
			writeError(w, http.StatusGatewayTimeout, "%s was stopped, and has not started again yet: see the events", name)
			return
		}
		for _, e := range evs {
			switch {
			case e.Type == health.EventServiceStarted && e.Service == name && e.Restarts > run:
				writeJSON(w, http.StatusOK, e)
				return
			case e.Type == health.EventStopping:
				writeError(w, http.StatusConflict, "the agent is stopping: %s will not start again", name)
				return
			}
		}
	}
}

func (s *Server) listHooks(w http.ResponseWriter, r *http.Request) {
	hooks := []client.Hook{}
	if s.hooks != nil {
		hooks = s.hooks()
	}
	writeJSON(w, http.StatusOK, hooks)
}

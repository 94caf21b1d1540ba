package api

import (
	"context"
	"net/http"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// Service is the workload the agent supervises, as POST /v1/service/restart
// drives it. The agent's supervisor is one.
type Service interface {
	// Name is what events call the workload.
	Name() string
	// Current is the run that runs now, and whether one runs.
	Current() (run int, running bool)
	// Restart restarts run; now skips the backoff's delay. It reports false
	// when that run is not the one running, or a stop or restart is under way.
	Restart(reason string, run int, now bool) bool
}

// Option configures a Server.
type Option func(*Server)

// WithService gives the Server the workload that POST /v1/service/restart
// restarts. Without it, that path answers 404: the agent runs no workload.
func WithService(sv Service) Option { return func(s *Server) { s.service = sv } }

// WithHooks gives the Server what GET /v1/hooks answers: the hooks' states.
// Without it, that path answers [].
func WithHooks(status func() []client.Hook) Option { return func(s *Server) { s.hooks = status } }

// WithNoticed gives the Server a function told of every notice POST
// /v1/notices records, once it is in the log: the metrics count them.
func WithNoticed(f func(health.Event)) Option { return func(s *Server) { s.noticed = f } }

// WithWatchdogs gives the Server the Monitor's watchdog checks by name,
// whose units of work POST .../work begins and DELETE .../work/ID ends.
// Without it, no check has units of work.
func WithWatchdogs(watchdogs map[string]*health.Watchdog) Option {
	return func(s *Server) { s.watchdogs = watchdogs }
}

// restartReason is what the service-exited event of a restart by hand says.
const restartReason = "restart requested"

// restartService restarts the workload at once and answers, once it runs
// again, with its service-started event.
func (s *Server) restartService(w http.ResponseWriter, r *http.Request) {
	if s.service == nil {
		writeError(w, http.StatusNotFound, "no service: this agent runs no workload (give service: in its file, or a command after --)")
		return
	}
	run, running := s.service.Current()
	if !running {
		writeError(w, http.StatusConflict, "%s is not running: it is between an exit and its restart, or has stopped", s.service.Name())
		return
	}
	follower := s.m.Follow(s.m.LastEventID())
	if !s.service.Restart(restartReason, run, true) {
		writeError(w, http.StatusConflict, "%s is being stopped or restarted already", s.service.Name())
		return
	}
	// Answer with the new run's start: the client knows it is back.
	ctx, cancel := context.WithTimeout(r.Context(), MaxWait)
	defer cancel()
	for {
		evs, _, err := follower.Next(ctx)
		if err != nil {
			writeError(w, http.StatusGatewayTimeout, "%s was stopped, and has not started again yet: see the events", s.service.Name())
			return
		}
		for _, e := range evs {
			switch {
			case e.Type == health.EventServiceStarted && e.Restarts > run:
				writeJSON(w, http.StatusOK, e)
				return
			case e.Type == health.EventStopping:
				writeError(w, http.StatusConflict, "the agent is stopping: %s will not start again", s.service.Name())
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

package supervise

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// Group is the services of one vitals: started in order, each once the
// one before it has been forked, and stopped in reverse, each once the one after it
// has exited. It ends when one of its services ends for good with
// ActionExit (its policy or a rule said so, or it could not start again):
// vitals then stops them all, and exits with that service's code.
type Group struct {
	services []*Supervisor // in the order they started
	ended    chan struct{} // closed once a service ended with ActionExit
	once     sync.Once
	by       *Supervisor // the service that ended the group; nil until then
	down     sync.WaitGroup
	done     chan struct{} // closed once every service has ended
}

// StartGroup starts the services of specs in their order (the order
// config gives them: dependencies first), each with its events going to
// emit, every wait done by reaper. A service that cannot start stops those
// started before it, in reverse, and is the error.
func StartGroup(specs []Spec, emit func(health.Event), logger *slog.Logger, reaper *Reaper) (*Group, error) {
	g := &Group{ended: make(chan struct{}), done: make(chan struct{})}
	defer func() { go func() { g.down.Wait(); close(g.done) }() }()
	for _, spec := range specs {
		sv, err := Start(spec, emit, logger, reaper)
		if err != nil {
			g.Stop("a service could not start", "", 0)
			name := spec.Name
			if name == "" && len(spec.Command) > 0 {
				name = spec.Command[0]
			}
			return nil, fmt.Errorf("service %s: %w", name, err)
		}
		g.services = append(g.services, sv)
		g.down.Add(1)
		go func() {
			defer g.down.Done()
			<-sv.Done()
			if sv.Outcome().Action == ActionExit {
				g.once.Do(func() {
					g.by = sv
					close(g.ended)
				})
			}
		}()
	}
	return g, nil
}

// Services are the group's services, in the order they started.
func (g *Group) Services() []*Supervisor { return g.services }

// Service is the service named name; the one service of a group of one,
// whatever name says. Nil when there is none.
func (g *Group) Service(name string) *Supervisor {
	if len(g.services) == 1 {
		return g.services[0]
	}
	for _, sv := range g.services {
		if sv.Name() == name {
			return sv
		}
	}
	return nil
}

// Ended is closed once a service has ended for good with ActionExit.
func (g *Group) Ended() <-chan struct{} { return g.ended }

// Done is closed once every service has ended for good, whatever ended it:
// there is nothing left to drain for.
func (g *Group) Done() <-chan struct{} { return g.done }

// Finishing tells every service that vitals is stopping: none restarts
// from now on (Supervisor.Finishing).
func (g *Group) Finishing() {
	for _, sv := range g.services {
		sv.Finishing()
	}
}

// Stop stops the services in the reverse of their order, each once the
// one after it has exited: its stop signal, then SIGKILL after its stop
// timeout (grace instead for the service named by, or for every service
// when by is "" and grace is not 0). reason is what their service-exited
// events say. It returns once all have exited.
func (g *Group) Stop(reason, by string, grace time.Duration) {
	for i := len(g.services) - 1; i >= 0; i-- {
		sv := g.services[i]
		within := time.Duration(0)
		if by == "" || sv.Name() == by {
			within = grace
		}
		sv.StopFor(reason, within)
		<-sv.Done()
	}
}

// Kill sends SIGKILL to every service's process group now.
func (g *Group) Kill() {
	for _, sv := range g.services {
		sv.Kill()
	}
}

// Code is what vitals exits with once the group has stopped: the code of
// the service that ended it; else the first code that is not 0 of the
// services that vitals stopped, in their order (a service a rule left down
// ended as the file wanted, and is no failure of the stop); else 0.
func (g *Group) Code() int {
	select {
	case <-g.ended:
		return g.by.Outcome().Code
	default:
	}
	for _, sv := range g.services {
		if code := sv.ExitCode(); code != 0 && sv.Outcome().Action != ActionIgnore {
			return code
		}
	}
	return 0
}

// EndedBy is the service that ended the group, once Ended is closed.
func (g *Group) EndedBy() *Supervisor {
	select {
	case <-g.ended:
		return g.by
	default:
		return nil
	}
}

// Forward passes every Forwarded signal vitals receives to each service
// that runs at the time, until the returned function is called.
func (g *Group) Forward() (stop func()) {
	stops := make([]func(), len(g.services))
	for i, sv := range g.services {
		stops[i] = sv.Forward()
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

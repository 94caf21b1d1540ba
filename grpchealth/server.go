package grpchealth

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/vitals-dev/vitals/health"
)

// Server is grpc.health.v1.Health over a health.Monitor. Make one with
// NewServer and register it with healthpb.RegisterHealthServer. It runs
// nothing: it reads the Monitor's state and follows its event log.
//
// The service names are the levels and the checks:
//
//	""                  the server as a whole: the ready level, as /readyz
//	readiness, ready    the ready level, as /readyz
//	liveness, live      the live level, as /livez
//	startup             the startup level, as /startupz
//	NAME                the check NAME, as /livez/NAME, /readyz/NAME or /startupz/NAME
//
// A level name wins over a check of the same name. A level is SERVING when
// its endpoint answers 200. A check is SERVING when it does not fail its
// level's endpoint: it passes or warns, or it is stopped (left out of the
// levels), or it is a pending live check (a pending live check does not fail
// liveness, as the kubelet starts liveness as success; a pending startup or
// ready check is NOT_SERVING). Everything else is NOT_SERVING.
//
// Once the Monitor drains (Drain, or the agent's stopping event, which comes
// with it), every service is NOT_SERVING, the live and startup levels and the
// checks too, as grpc-go's health server does on Shutdown: a draining server
// is going away, and a client that watches any of its services should move
// on. Readiness fails on Drain by itself.
//
// Any other name is unknown: Check fails with NOT_FOUND, and Watch answers
// SERVICE_UNKNOWN and keeps the stream open, to answer the check's status
// once a check of that name is added.
//
// All methods are safe for concurrent use.
type Server struct {
	healthpb.UnimplementedHealthServer
	m *health.Monitor

	mu       sync.Mutex
	streams  int                // Watch streams open
	feed     *feed              // what they read; nil when there is none
	stopFeed context.CancelFunc // stops the feed's goroutine
}

var _ healthpb.HealthServer = (*Server)(nil)

// NewServer returns a Server that answers from m's state.
func NewServer(m *health.Monitor) *Server { return &Server{m: m} }

// levelNames are the service names that stand for a level: those the
// Kubernetes documentation suggests for gRPC probes (liveness, readiness),
// the levels' own names, and "" for the server as a whole, which is healthy
// when it can serve.
var levelNames = map[string]health.Level{
	"":          health.Ready,
	"readiness": health.Ready,
	"ready":     health.Ready,
	"liveness":  health.Live,
	"live":      health.Live,
	"startup":   health.Startup,
}

// maxServices caps the services List answers with: with more, it fails
// with RESOURCE_EXHAUSTED, as the protocol allows and as grpc-go's health
// server does past the same 100 (its maxAllowedServices), rather than send
// a message of any size. The six level names count among them.
const maxServices = 100

// Check answers the service's status now: SERVING or NOT_SERVING, or a
// NOT_FOUND error for a name that is neither a level's nor a check's.
func (s *Server) Check(_ context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	name := req.GetService()
	sv := s.now().service(name)
	if !sv.known {
		return nil, status.Errorf(codes.NotFound, "unknown service %q", name)
	}
	return &healthpb.HealthCheckResponse{Status: sv.serving()}, nil
}

// List answers the status of every service: the six level names and every
// check. With more than 100 services in all it fails with
// RESOURCE_EXHAUSTED; Check and Watch answer for each of them still.
func (s *Server) List(context.Context, *healthpb.HealthListRequest) (*healthpb.HealthListResponse, error) {
	v := s.now()
	statuses := make(map[string]*healthpb.HealthCheckResponse, len(levelNames)+len(v.checks))
	for name := range levelNames {
		statuses[name] = &healthpb.HealthCheckResponse{Status: v.service(name).serving()}
	}
	for name := range v.checks {
		statuses[name] = &healthpb.HealthCheckResponse{Status: v.service(name).serving()}
	}
	if len(statuses) > maxServices {
		return nil, status.Errorf(codes.ResourceExhausted, "server health list exceeds maximum capacity: %d", maxServices)
	}
	return &healthpb.HealthListResponse{Statuses: statuses}, nil
}

// Watch sends the service's status at once, then each change of it, in
// order, until the client goes away. One goroutine follows the Monitor's
// event log for all the Server's streams while any is open, and each stream
// reads what it copied on a goroutine of its own: the Monitor never waits
// for a stream, and a slow client only falls behind. A stream that falls
// further behind than the Server keeps (the last health.DefaultEventLog
// events) goes on from the present status, as a new one would.
//
// A started Monitor emits an event for every change a stream could see
// (check-added, -removed, -stopped, -started, and stopping on Drain). A
// check added or removed before the Monitor starts makes none: Watch sends
// it with the next event; Check answers it at once.
func (s *Server) Watch(req *healthpb.HealthCheckRequest, stream grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	ctx := stream.Context()
	err := s.watch(ctx, req.GetService(), func(st healthpb.HealthCheckResponse_ServingStatus) error {
		return stream.Send(&healthpb.HealthCheckResponse{Status: st})
	})
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	return err
}

// watch sends the status of the service name, then every change of it,
// until ctx ends or send fails. It replays the Monitor's events one by one,
// so that a check that flips twice between two reads of the log is sent
// twice, and judges by the latest view after each batch for what events do
// not say.
func (s *Server) watch(ctx context.Context, name string, send func(healthpb.HealthCheckResponse_ServingStatus) error) error {
	f, leave := s.join()
	defer leave()
	sv, cursor := s.start(name)
	sent := sv.serving()
	if err := send(sent); err != nil {
		return err
	}
	tell := func(st healthpb.HealthCheckResponse_ServingStatus) error {
		if st == sent {
			return nil
		}
		sent = st
		return send(st)
	}
	for {
		events, v, err := f.wait(ctx, cursor)
		if err != nil {
			return err
		}
		if events[0].ID > cursor+1 {
			// The log dropped events this stream had not read: go on from
			// the present, as a new stream would.
			sv, cursor = s.start(name)
			if err := tell(sv.serving()); err != nil {
				return err
			}
			continue
		}
		for _, e := range events {
			was := sv.serving()
			sv.apply(e)
			if now := sv.serving(); now != was {
				if err := tell(now); err != nil {
					return err
				}
			}
		}
		cursor = events[len(events)-1].ID
		// The view may be ahead of the events read so far: a status it
		// tells early is the one the next change in the log leads to (a
		// service has two statuses to alternate between), so replaying that
		// change repeats nothing, and every later change is still sent.
		now := v.service(name)
		sv.learn(now)
		now.draining = sv.draining
		if err := tell(now.serving()); err != nil {
			return err
		}
	}
}

// startTries bounds how often start reads the state again because events
// came meanwhile.
const startTries = 3

// start reads the service's state and the id of the last event it reflects,
// so that replaying the events after that id repeats nothing the state
// shows already. While events keep coming it tries startTries times, then
// settles for the id before its last read: a change may then be sent twice,
// none is missed.
func (s *Server) start(name string) (service, uint64) {
	cursor := s.m.LastEventID()
	for tries := 1; ; tries++ {
		sv := s.now().service(name)
		last := s.m.LastEventID()
		if last == cursor || tries == startTries {
			return sv, cursor
		}
		cursor = last
	}
}

// now reads the Monitor's state.
func (s *Server) now() *view { return newView(s.m.Snapshot()) }

// join returns the feed the Server's streams read, starting one when there
// is none, and the function a stream calls when it ends: the feed's
// goroutine stops with the last stream.
func (s *Server) join() (*feed, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streams == 0 {
		ctx, cancel := context.WithCancel(context.Background())
		last := s.m.LastEventID()
		s.feed, s.stopFeed = newFeed(last), cancel
		go s.follow(ctx, s.m.Follow(last), s.feed)
	}
	s.streams++
	f := s.feed
	return f, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.streams--; s.streams == 0 {
			s.stopFeed()
			s.feed, s.stopFeed = nil, nil
		}
	}
}

// follow copies the events that follower reads into f, with a view read after
// each batch, until ctx ends: when the last stream does.
func (s *Server) follow(ctx context.Context, follower *health.Follower, f *feed) {
	for {
		events, gap, err := follower.Next(ctx)
		if err != nil {
			return
		}
		f.add(events, gap.Len() > 0, s.now())
	}
}

// feedSize is how many events a feed keeps for its streams: as many as a
// Monitor's log keeps by default.
const feedSize = health.DefaultEventLog

// feed is the Monitor's event log as the Server's streams read it: a
// bounded ring that one goroutine fills, so that the Monitor's lock sees
// one reader however many streams there are, with the view read after the
// latest events.
type feed struct {
	mu      sync.RWMutex
	events  [feedSize]health.Event // a ring: event id i is at (i-1) % feedSize
	n       int                    // how many of the last events it holds
	last    uint64                 // the id of the last event added
	view    *view                  // read after the last event
	changed chan struct{}          // closed when events are added
}

func newFeed(last uint64) *feed {
	return &feed{last: last, changed: make(chan struct{})}
}

// add adds events that follow the last ones, and the view read after them;
// gap says that the Monitor's log dropped events between.
func (f *feed) add(events []health.Event, gap bool, v *view) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if gap {
		// The Monitor's log dropped events before they were read: so does
		// the feed, so that a stream sees the gap where it reads.
		f.n = 0
	}
	for _, e := range events {
		f.events[(e.ID-1)%feedSize] = e
	}
	f.n = min(f.n+len(events), feedSize)
	f.last, f.view = events[len(events)-1].ID, v
	close(f.changed)
	f.changed = make(chan struct{})
}

// wait returns the events after id that the feed holds, oldest first, and
// the latest view, once there is at least one such event; or ctx's error.
// When the first id returned is above id+1, the feed dropped the events
// between.
func (f *feed) wait(ctx context.Context, id uint64) ([]health.Event, *view, error) {
	for {
		f.mu.RLock()
		var out []health.Event
		if f.last > id && f.n > 0 {
			first := max(id+1, f.last-uint64(f.n)+1)
			out = make([]health.Event, 0, f.last-first+1)
			for i := first; i <= f.last; i++ {
				out = append(out, f.events[(i-1)%feedSize])
			}
		}
		v, changed := f.view, f.changed
		f.mu.RUnlock()
		if len(out) > 0 {
			return out, v, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// view is a Monitor's state as the service names see it, from one Snapshot.
type view struct {
	passing  [health.Ready + 1]bool
	draining bool
	checks   map[string]checkState
}

type checkState struct {
	level   health.Level
	status  health.Status
	stopped bool
}

func newView(snap health.Snapshot) *view {
	v := &view{draining: snap.Draining, checks: make(map[string]checkState, len(snap.Checks))}
	v.passing[health.Startup], v.passing[health.Live], v.passing[health.Ready] = snap.Startup, snap.Live, snap.Ready
	for _, c := range snap.Checks {
		v.checks[c.Name] = checkState{level: c.Level, status: c.Status, stopped: c.Stopped}
	}
	return v
}

// service is the state of the service name.
func (v *view) service(name string) service {
	if l, ok := levelNames[name]; ok {
		return service{name: name, known: true, level: l, passing: v.passing[l], draining: v.draining}
	}
	c, ok := v.checks[name]
	return service{name: name, check: true, known: ok, level: c.level, status: c.status, stopped: c.stopped,
		draining: v.draining}
}

// service is what the status of one service name is made of.
type service struct {
	name     string
	check    bool          // the name is a check's, not a level's
	known    bool          // a level's name, or a check's the Monitor has
	level    health.Level  // the level named, or the check's
	passing  bool          // the level's verdict
	status   health.Status // the check's
	stopped  bool          // the check is stopped: left out of the levels
	draining bool
}

// serving is the service's gRPC status; see Server for the rules.
func (sv service) serving() healthpb.HealthCheckResponse_ServingStatus {
	switch {
	case !sv.known:
		return healthpb.HealthCheckResponse_SERVICE_UNKNOWN
	case sv.draining:
		return healthpb.HealthCheckResponse_NOT_SERVING
	case !sv.check && sv.passing,
		sv.check && (sv.stopped || sv.status == health.Pass || sv.status == health.Warn ||
			sv.status == health.Pending && sv.level == health.Live):
		return healthpb.HealthCheckResponse_SERVING
	}
	return healthpb.HealthCheckResponse_NOT_SERVING
}

// apply changes the service as event e says: level events carry the level's
// new verdict and check events the check's new status; checks-reset makes
// every check pending; stopping (from Drain, or the agent's as it drains)
// drains; check-added, -removed, -stopped and -started say whether the check
// is there and counts.
func (sv *service) apply(e health.Event) {
	switch e.Type {
	case health.EventLevelPassed, health.EventLevelFailed:
		if !sv.check && e.Level == sv.level {
			sv.passing = e.Type == health.EventLevelPassed
		}
	case health.EventCheckPassed, health.EventCheckWarned, health.EventCheckFailed:
		if sv.check && e.Check == sv.name {
			sv.status = e.To
		}
	case health.EventChecksReset:
		sv.status = health.Pending
	case health.EventStopping:
		sv.draining = true
	case health.EventCheckAdded, health.EventCheckRemoved, health.EventCheckStopped, health.EventCheckStarted:
		if sv.check && e.Check == sv.name {
			sv.membership(e)
		}
	}
}

// membership changes the check's service as a check-added, -removed,
// -stopped or -started event says.
func (sv *service) membership(e health.Event) {
	switch e.Type {
	case health.EventCheckAdded: // a new check is pending, and runs
		sv.known, sv.level, sv.status, sv.stopped = true, e.Level, health.Pending, false
	case health.EventCheckRemoved:
		sv.known = false
	case health.EventCheckStopped:
		sv.stopped = true
	case health.EventCheckStarted:
		sv.stopped = false
	}
}

// learn takes from a later reading what the events may not have said: a
// Monitor that has not started emits no check-added, -removed, -stopped or
// -started, and a view read after a batch may be ahead of it. (So apply's
// membership cases matter when one batch holds, say, a stop and a start: the
// view after it shows only the end.) A service it did not know yet it
// takes whole. Draining is never undone.
func (sv *service) learn(now service) {
	draining := sv.draining || now.draining
	if sv.known {
		sv.known, sv.level, sv.stopped = now.known, now.level, now.stopped
	} else {
		*sv = now
	}
	sv.draining = draining
}

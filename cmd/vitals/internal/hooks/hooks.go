// Package hooks tells the world about a Monitor's events: each hook of the
// file's hooks: runs a command (exec), calls a URL (webhook) or records a
// Pebble notice (pebble-notice) for every event of the types it is on, so
// that a charm, an operator or a pager is woken when a check fails or the
// workload exits, instead of polling.
//
// It takes the file's hooks as config gives them, as Pebble's managers take
// its plan: a hook is a config.Hook, described and defaulted there once
// (config.Hook.WithDefaults, which New applies too, so that a zero field
// means what it means in the file). It sits below config, which knows
// nothing of it.
//
// Hooks follow the Monitor's event log, each with a health.Follower, as the
// management API's readers do: the engine appends an event and moves on, and
// a slow or broken hook never delays a check, a probe answer or another hook.
// Each hook has one goroutine, which delivers its events one at a time in the
// order of their IDs. A hook that falls behind (more than BehindAfter of its
// events wait) coalesces what waits: the latest event of each check, level
// and notice key, every service event and stop, in order, rather than one
// delivery per event of a flood (a command forked per event). Exec hooks run
// at most MaxExecAtOnce commands at once between them. The log is bounded
// (health.DefaultEventLog state changes, and as many notices apart): a hook
// that falls behind by more than the log holds misses the events that were
// dropped, and says so in its log line, its Status and its metrics; when
// state changes were among them, it is delivered each check's state as it
// is then once it has caught up (an event of id 0, see stateNow), so that
// it never keeps acting on a status that has changed since.
//
// # Exec
//
// An exec hook's command gets the event's JSON (as GET /v1/events writes
// it) and a newline on stdin, and vitals's environment plus
// VITALS_EVENT_ID, VITALS_EVENT_TYPE, VITALS_EVENT_TIME (RFC 3339) and one
// VITALS_EVENT_<FIELD> for every other field the JSON has (exitCode:
// VITALS_EVENT_EXIT_CODE; a notice's key and data: VITALS_EVENT_KEY, and
// VITALS_EVENT_DATA as its JSON). It runs in a process group of its own,
// killed whole at its timeout. Exit status 0 delivers the event. A command
// that fails is not run again for the same event: a command may have done
// half its work, and only it knows whether a second run is safe. The
// failure is logged with the command's output and counted, and the next
// event is delivered as usual.
//
// # Webhook and Pebble notice
//
// A hook that sends a request for each event (a webhook, a Pebble notice)
// is delivered by a 2xx answer (a Pebble notice's only when it is Pebble's
// answer). A network error, a timeout, a 5xx, a 429 or a Pebble notice's
// 2xx from something else is tried again, up to its Attempts in all,
// waiting BackoffInitial, then twice as long each time up to BackoffMax
// (give or take 10%, so that hooks that failed together do not retry
// together), or what a 429's or 503's Retry-After asks within BackoffMax.
// Any other answer (a 4xx, a redirect, which is not followed) fails at
// once: sending the same request again would get the same answer.
//
// A webhook sends the event's JSON to its URL. Its requests do not go
// through the proxy of HTTP_PROXY or HTTPS_PROXY: those are set for the
// workload's way out, and a hook is most often for a neighbour (an operator
// in the cluster, a local agent) that a proxy cannot reach.
//
// A Pebble notice records the event as a custom notice of the Pebble whose
// API listens on its socket, as `pebble notify` does: key NoticeKey(the
// event's type), data the event's fields as strings; a notice of the
// workload's keeps its own key and data (see pebbleNoticeOf). Pebble keeps
// one notice per key (and user): a second event of a type adds an
// occurrence to its notice and replaces its data, and wakes whoever waits
// for notices (a Juju charm) unless its repeat-after says not yet. A Pebble
// that restarts, or has not made its socket yet, gets the event once it is
// back.
//
// The agent builds a Runner from the file (config.Config.Hooks), starts it
// with the Monitor, serves its Status on the management API and registers it
// as a prometheus.Collector; it stops it after the workload, so that the last
// events (service-exited, stopping) reach the hooks too.
package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/escape"
)

// BehindAfter is how many of a hook's events may wait before the hook
// coalesces them: more than come in any burst of a healthy program's (its
// checks' start, a restart of its workload), so that a hook that keeps up
// gets every event, while one that falls behind a flood delivers what it
// means and not each step of it.
const BehindAfter = 64

// MaxExecAtOnce bounds the exec hooks' commands running at once, between
// every exec hook: each hook runs one at a time already, and a file with
// many of them must not fork a crowd on one event.
const MaxExecAtOnce = 4

// Status is where a hook stands, as GET /v1/hooks lists it: the API's wire
// type, client.Hook.
type Status = client.Hook

// Runner delivers a Monitor's events to hooks. Make one with New, Start it,
// and Stop it. It is a prometheus.Collector of the hooks' metrics
// (metrics.go).
type Runner struct {
	logger    *slog.Logger
	redact    func(string) string // for what is logged: redacted, then escaped
	rawRedact func(string) string // the file's, for the targets shown
	m         *health.Monitor

	mu      sync.Mutex // guards hooks and started
	hooks   []*hook    // those of the file as it is now: Apply changes them
	started bool
	// execSlots holds a place for each exec hook's command running: at
	// most MaxExecAtOnce.
	execSlots chan struct{}

	// delivering ends the deliveries under way (Stop's context).
	delivering    context.Context
	endDelivering context.CancelFunc

	wg sync.WaitGroup
}

// hook is one of the file's hooks at work: its goroutine's delivery and
// its counters.
type hook struct {
	spec   config.Hook
	kind   string
	target string
	on     map[health.EventType]bool
	// follower is the hook's place in the log: each hook reads at its own
	// pace. Stop closes it.
	follower *health.Follower
	// deliver delivers one event, and says how many attempts it made.
	deliver func(ctx context.Context, ev health.Event, body []byte) (attempts int, err error)
	// done is called when the hook stops: a webhook or a Pebble notice
	// closes its idle connections.
	done func()
	// finished is closed when its goroutine has returned; before is the
	// finished of the hook it takes over from (Apply), which delivers
	// the events before this one's first: nil when there is none.
	finished chan struct{}
	before   <-chan struct{}
	// after is the ID of the last event before those it delivers, as it
	// was made: a hook that takes over from it before Start (Apply)
	// delivers from there, as this one would have.
	after uint64

	// Its goroutine's own: seen is each check's status as the hook last
	// read it, from its events, what a resync compares with; read is the
	// ID of the last event read or missed; resync says a gap dropped state
	// changes, and the state is delivered once the hook has caught up;
	// unsaid counts the events missed since the last log line of it, and
	// saidAt is when that was.
	seen   map[string]health.Status
	read   uint64
	resync bool
	unsaid uint64
	saidAt time.Time

	mu       sync.Mutex // guards st and attempts
	st       Status
	attempts uint64
}

// New returns a Runner of the file's hooks over m, each with its defaults
// (config.Hook.WithDefaults), in their order.
// Every failure is logged to logger, its text passed through redact (the
// file's Config.Redact), which may be nil, and then escaped as a check's
// output is (escape.Text): it may quote a hook command's output or a
// receiver's answer. Nothing runs until Start.
func New(hs []config.Hook, m *health.Monitor, logger *slog.Logger, redact func(string) string) *Runner {
	if logger == nil {
		logger = slog.Default()
	}
	if redact == nil {
		redact = func(s string) string { return s }
	}
	r := &Runner{logger: logger, redact: func(s string) string { return escape.Text(redact(s)) }, rawRedact: redact, m: m,
		execSlots: make(chan struct{}, MaxExecAtOnce)}
	r.delivering, r.endDelivering = context.WithCancel(context.Background())
	for i, s := range hs {
		if h := r.newHook(s.WithDefaults(i+1), 0); h != nil {
			r.hooks = append(r.hooks, h)
		}
	}
	return r
}

// newHook is the hook of s, with its defaults, following the events after
// the ID after; nil for a hook with nothing to deliver with.
func (r *Runner) newHook(s config.Hook, after uint64) *hook {
	h := &hook{spec: s, on: map[health.EventType]bool{}, follower: r.m.Follow(after), seen: map[string]health.Status{},
		finished: make(chan struct{}), after: after}
	for _, t := range s.On {
		h.on[t] = true
	}
	switch {
	case s.Exec != nil:
		spec := *s.Exec
		h.kind = "exec"
		h.deliver = func(ctx context.Context, ev health.Event, body []byte) (int, error) {
			select {
			case r.execSlots <- struct{}{}:
			case <-ctx.Done():
				return 0, fmt.Errorf("not run: %w", ctx.Err())
			}
			defer func() { <-r.execSlots }()
			return 1, runCommand(ctx, spec, ev, body) // one attempt: see the package doc
		}
		if len(s.Exec.Command) > 0 {
			h.target = s.Exec.Command[0]
		}
	case s.Webhook != nil:
		w := newWebhook(*s.Webhook)
		h.kind, h.deliver, h.done = "webhook", r.sending(h, w, nil), w.client.CloseIdleConnections
		h.target = r.rawRedact(RedactedURL(s.Webhook.URL))
	case s.PebbleNotice != nil:
		p := *s.PebbleNotice
		sd := newPebbleNotice(p)
		h.kind, h.deliver, h.done = "pebble-notice", r.sending(h, sd, noticeBody(p)), sd.client.CloseIdleConnections
		h.target = p.Socket
	default:
		h.follower.Close()
		return nil // the file always gives one; nothing to deliver with
	}
	h.st = Status{Name: s.Name, Kind: h.kind, Target: h.target, On: slices.Clone(s.On)}
	return h
}

// Apply makes hs the hooks from now on (a reload of the file), each with
// its defaults, in their order. A hook defined as before goes on as it
// was, its counters and its place in the log kept; a hook whose
// definition changed follows on from the event after the last one the old
// definition delivers, so that none is delivered twice or missed; a new
// hook follows the events from now on. A hook that goes, or whose
// definition changed, delivers what it was handed, on its goroutine, and
// then stops: Stop waits for it too.
func (r *Runner) Apply(hs []config.Hook) {
	r.mu.Lock()
	defer r.mu.Unlock()
	was := map[string]*hook{}
	for _, h := range r.hooks {
		was[h.spec.Name] = h
	}
	var next []*hook
	for i, s := range hs {
		s = s.WithDefaults(i + 1)
		old := was[s.Name]
		if old != nil && reflect.DeepEqual(old.spec, s) {
			next = append(next, old)
			delete(was, s.Name)
			continue
		}
		after := r.m.LastEventID()
		switch {
		case old != nil && r.started:
			after = old.follower.End()
		case old != nil: // it delivered nothing yet: this one delivers what it would have
			after = old.after
			old.follower.Close()
		}
		delete(was, s.Name)
		h := r.newHook(s, after)
		if h == nil {
			continue
		}
		if old != nil && r.started {
			h.before = old.finished // the receiver gets the events in order
		}
		next = append(next, h)
		if r.started {
			r.start(h)
		}
	}
	for _, h := range was {
		h.follower.Close()
	}
	r.hooks = next
}

// RedactedURL is u as logs, errors, the API and validate --print show it:
// its password hidden, its query and every path segment after the first left
// out — a chat webhook's secret is its path (https://hooks.slack.com/services/…).
func RedactedURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(a URL that does not parse)"
	}
	out := (&url.URL{Scheme: p.Scheme, User: p.User, Host: p.Host}).Redacted()
	path := p.EscapedPath()
	if first, rest, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/"); ok && rest != "" {
		out += "/" + first + "/…"
	} else {
		out += path
	}
	if p.RawQuery != "" {
		out += "?…"
	}
	return out
}

// Start starts each hook's goroutine. Each begins with the oldest event the
// log still holds, so that a Runner started before the Monitor misses none.
// It has no context of its own: a signal that stops vitals must not stop the
// hooks before they deliver the events of the stop. Call Stop.
func (r *Runner) Start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = true
	for _, h := range r.hooks {
		r.start(h)
	}
}

// start starts h's goroutine.
func (r *Runner) start(h *hook) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(h.finished)
		if h.before != nil {
			select {
			case <-h.before:
			case <-r.delivering.Done():
			}
		}
		r.follow(h)
		if h.done != nil {
			h.done()
		}
	}()
}

// abandonAfter bounds how long Stop waits, once its context has ended, for
// the cancelled deliveries to end.
const abandonAfter = 2 * time.Second

// Stop delivers the events emitted before it was called, then stops the
// hooks. When ctx ends first, the deliveries under way are cancelled (each
// counts as failed) and the rest are not made; Stop then returns ctx's error
// once every hook has stopped. Call it after the workload has stopped, with a
// deadline, so that its last events reach the hooks.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	for _, h := range r.hooks {
		h.follower.Close()
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	defer r.endDelivering()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		r.endDelivering()
		select {
		case <-done:
		case <-time.After(abandonAfter):
			// A command that does not die (stuck in the kernel) is left
			// behind rather than hold up vitals's exit.
			return fmt.Errorf("hooks: stopped before every event was delivered, and a delivery did not end within %v of its cancel: %w", abandonAfter, ctx.Err())
		}
		return fmt.Errorf("hooks: stopped before every event was delivered: %w", ctx.Err())
	}
}

// follow delivers the events of h's types in the order of their IDs until
// Stop, from the log by cursor.
func (r *Runner) follow(h *hook) {
	for {
		evs, gap, err := h.follower.Next(r.delivering)
		if gap.Len() > 0 {
			h.read = gap.Last
			h.resync = h.resync || gap.Changes
			r.missed(h, gap)
		}
		if err != nil {
			r.sayMissed(h)
			return // io.EOF: every event emitted before Stop is handled
		}
		if len(evs) > 0 {
			h.read = evs[len(evs)-1].ID
		}
		evs = r.wanted(h, evs)
		if h.resync && h.read == r.m.LastEventID() {
			// Caught up: the state now, after every event the log kept.
			h.resync = false
			r.sayMissed(h)
			evs = append(evs, r.stateNow(h)...)
		}
		for i, ev := range evs {
			if r.delivering.Err() != nil {
				r.leftBehind(h, evs[i:])
				return
			}
			r.deliverOne(h, ev)
		}
	}
}

// wanted is the events of evs that h is on, in order, each check's status
// noted as h reads it; more than BehindAfter of them are coalesced.
func (r *Runner) wanted(h *hook, evs []health.Event) []health.Event {
	out := evs[:0:0]
	for _, ev := range evs {
		if ev.Type.Transition() && ev.ID != 0 {
			h.seen[ev.Check] = ev.To
		}
		if ev.Type == health.EventCheckRemoved {
			delete(h.seen, ev.Check)
		}
		if h.on[ev.Type] {
			out = append(out, ev)
		}
	}
	if len(out) <= BehindAfter {
		return out
	}
	kept := coalesce(out)
	r.logger.Warn("hook: fell behind, delivering the latest event of each check, level and notice", "hook", h.spec.Name,
		"waiting", len(out), "delivering", len(kept))
	h.mu.Lock()
	h.st.Coalesced += uint64(len(out) - len(kept))
	h.mu.Unlock()
	return kept
}

// coalesce is evs, in order, with only the last of each check's status
// changes (check-passed, -warned, -failed), of each level's (level-*) and
// of each notice key's, which counts the occurrences of those it stands
// for: what a hook that fell behind delivers. Every other event (a
// service's, a stop, a reset, a check stopped or started) is kept.
func coalesce(evs []health.Event) []health.Event {
	last := map[string]int{} // a key: the index of its last event
	count := map[string]int{}
	for i, ev := range evs {
		if k := coalesceKey(ev); k != "" {
			last[k] = i
			count[k] += max(ev.Occurrences, 1)
		}
	}
	out := make([]health.Event, 0, len(last))
	for i, ev := range evs {
		k := coalesceKey(ev)
		if k != "" && last[k] != i {
			continue
		}
		if ev.Type == health.EventNotice && count[k] > 1 {
			ev.Occurrences = count[k]
		}
		out = append(out, ev)
	}
	return out
}

// coalesceKey is what an event is the latest of: "" for an event that is
// never coalesced.
func coalesceKey(ev health.Event) string {
	switch {
	case ev.Type == health.EventNotice:
		return "notice\x00" + ev.Key
	case ev.Type == health.EventLevelPassed || ev.Type == health.EventLevelFailed:
		return "level\x00" + ev.Level.String()
	case ev.Type.Transition():
		return "check\x00" + ev.Check
	}
	return "" // a check's addition, removal, stop or start too: not its status
}

// stateNow is, once h has caught up after a gap that dropped state
// changes, an event for each check whose status is not the one h last read
// of it, of the types h is on: the state as it is now, so that h never
// keeps acting on a status that changed while it was away. Each has id 0 (no
// event of the log has it), time now, from the status h last read and to
// the one now, and an output that says so.
func (r *Runner) stateNow(h *hook) []health.Event {
	var out []health.Event
	now := time.Now()
	for _, c := range r.m.Snapshot().Checks {
		from, ok := h.seen[c.Name]
		if ok && from == c.Status {
			continue
		}
		var typ health.EventType
		switch c.Status {
		case health.Pass:
			typ = health.EventCheckPassed
		case health.Warn:
			typ = health.EventCheckWarned
		case health.Fail:
			typ = health.EventCheckFailed
		default:
			continue // pending: nothing to act on
		}
		h.seen[c.Name] = c.Status
		if !h.on[typ] {
			continue
		}
		out = append(out, health.Event{Time: now, Type: typ, Check: c.Name, Level: c.Level, From: from, To: c.Status,
			Output: "the state now: the hook fell behind, and the event log dropped changes it had not read"})
	}
	return out
}

// leftBehind logs the events of h's types that Stop's deadline kept from
// being delivered: rest, and those h has not read yet.
func (r *Runner) leftBehind(h *hook, rest []health.Event) {
	n := 0
	for {
		for _, ev := range rest {
			if h.on[ev.Type] {
				n++
			}
		}
		var gap health.Gap
		var err error
		if rest, gap, err = h.follower.Next(r.delivering); gap.Len() > 0 {
			r.missed(h, gap)
		}
		if err != nil {
			break // io.EOF: Stop closed it, so Next never waits here
		}
	}
	r.sayMissed(h)
	if n > 0 {
		r.logger.Error("hook: vitals stopped before these events were delivered", "hook", h.spec.Name, "events", n)
	}
}

// missed records that the log dropped the events of gap before h read
// them; the log line says so at most once a second (missedEvery), with how
// many, since a hook far behind a log with holes meets a gap at each.
func (r *Runner) missed(h *hook, gap health.Gap) {
	h.mu.Lock()
	h.st.Missed += gap.Len()
	h.mu.Unlock()
	h.unsaid += gap.Len()
	if time.Since(h.saidAt) >= missedEvery {
		r.sayMissed(h)
	}
}

// missedEvery is how often at most a hook logs the events it missed.
const missedEvery = time.Second

// sayMissed logs the events h missed since it last said so, if any.
func (r *Runner) sayMissed(h *hook) {
	if h.unsaid == 0 {
		return
	}
	r.logger.Error("hook: fell behind the event log, events missed", "hook", h.spec.Name,
		"missed", h.unsaid, "upTo", h.read)
	h.unsaid, h.saidAt = 0, time.Now()
}

// deliverOne delivers ev to h, and records how it went.
func (r *Runner) deliverOne(h *hook, ev health.Event) {
	attempts := 0
	body, err := json.Marshal(ev)
	if err == nil {
		attempts, err = h.deliver(r.delivering, ev, body)
	}
	var msg string
	if err != nil {
		// Logged before it shows in the Status and the metrics: who sees one
		// finds the other.
		msg = r.redact(err.Error())
		r.logger.Error("hook: event not delivered", "hook", h.spec.Name, "event", ev.ID, "type", string(ev.Type),
			"attempts", attempts, "err", msg)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.attempts += uint64(attempts)
	if err != nil {
		h.st.Failed++
		h.st.Failing = true
		h.st.LastError, h.st.LastErrorTime = msg, time.Now()
		return
	}
	h.st.Delivered++
	if ev.ID != 0 { // the state now after a gap is no event of the log
		h.st.LastDeliveredID = ev.ID
	}
	h.st.Failing = false
}

// failedAttempt records and logs an attempt at delivering ev that failed,
// when another one follows: the last is the event's failure.
func (r *Runner) failedAttempt(h *hook, ev health.Event, attempt int, err error) {
	msg := r.redact(err.Error())
	r.logger.Warn("hook: attempt failed, trying again", "hook", h.spec.Name, "event", ev.ID,
		"type", string(ev.Type), "attempt", attempt, "err", msg)
	h.mu.Lock()
	h.st.LastError, h.st.LastErrorTime = msg, time.Now()
	h.mu.Unlock()
}

// Status returns where each hook stands, in the file's order.
func (r *Runner) Status() []Status {
	r.mu.Lock()
	hooks := r.hooks
	r.mu.Unlock()
	out := make([]Status, 0, len(hooks))
	for _, h := range hooks {
		h.mu.Lock()
		st := h.st
		h.mu.Unlock()
		st.On = slices.Clone(st.On)
		out = append(out, st)
	}
	return out
}

// envName turns a JSON key into the variable that carries it to an exec
// hook: exitCode is VITALS_EVENT_EXIT_CODE.
func envName(key string) string {
	var b strings.Builder
	b.WriteString("VITALS_EVENT_")
	for i, c := range key {
		if c >= 'A' && c <= 'Z' && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(c)
	}
	return strings.ToUpper(b.String())
}

// Package ui is the agent's status page: one HTML page with its script and
// style, embedded in the binary, and the read-only JSON and event stream
// behind it, served on the probe listener beside /readyz:
//
//	GET /                          the page
//	GET /ui/app.js, /ui/style.css, /ui/icon.svg
//	                               its script, style and icon
//	GET /ui/api/status             the levels, every check with its kept results, the services (client.Status)
//	GET /ui/api/events[?after=ID]  the kept events after ID, oldest first (a JSON array of health.Event);
//	                               with Accept: text/event-stream, a stream of them, each with its id,
//	                               resuming after Last-Event-ID
//	GET /ui/badge/NAME.svg, /ui/badge/level/LEVEL.svg
//	                               a check's or a level's status as an SVG badge (Page.Badges)
//
// Nothing here writes: GET and HEAD only (405 otherwise), and no answer runs
// a check or waits on one. A status takes the Monitor's lock for one
// Snapshot, and is shared by every page open until the next event or for
// statusMaxAge, whichever comes first, and after that for as long as
// nothing new came (no event, no result). It carries an ETag of that
// version, so that a page that has it is answered 304, and is gzipped when
// asked (Accept-Encoding), once for every page that reads it; each check's
// results in it are written compactly (client.Status's JSON), about a
// fourteenth of their size as a list. At most Options.Streams event streams
// are open at once (503 beyond), so that pages never take the connections
// the probes need. With Options.Details off, no answer carries an output:
// results, the events of checks and levels and the data of notices are
// written without theirs, as the probe endpoints write "reason withheld".
//
// Every answer carries a Content-Security-Policy that allows nothing but
// this page's own script, style and requests: the page has no inline
// script or style, and loads nothing from elsewhere.
//
// The agent mounts it (ui: in vitals.yaml, on by default) behind the guard
// of package access, which keeps it from the clients that details: does not
// let read it (but for the badges, which say no more than the probe
// endpoints' codes, and are for everyone), and ends its streams through the probe server's BaseContext;
// it imports nothing of the agent.
package ui

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/webpage"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/wire"
	"github.com/vitals-dev/vitals/health"
)

// statusMaxAge is how long a status is shared while no event comes: a page
// refreshes every few seconds, so twenty pages open cost a Snapshot a
// second, not twenty; an event (every change of status) makes the next
// one new at once, so that a page never reads a status older than the
// event that told it to look.
const statusMaxAge = time.Second

// retryAfter is what a 503 for too many streams asks the page to wait, in
// seconds.
const retryAfter = "5"

// Options configure a Page.
type Options struct {
	// Details shows outputs: results' outputs and observed values, the
	// outputs of check and level events, notices' data. Off, the page's
	// answers carry none (vitals.yaml's details:).
	Details bool
	// ServiceInfo names the service at the top of the page.
	ServiceInfo health.ServiceInfo
	// Services say how each supervised service runs, in their start order;
	// nil when vitals runs none.
	Services func() []client.Workload
	// Streams is how many event streams may be open at once; at least 1.
	Streams int
}

// Page serves the status page over one Monitor. Make one with New.
type Page struct {
	m       *health.Monitor
	o       Options
	look    atomic.Pointer[look] // o's Details and ServiceInfo, as Show changes them
	started time.Time
	streams chan struct{} // a token per stream open

	mu      sync.Mutex // one status is built at a time; the others wait for it
	cached  *webpage.JSON
	version version // the cached status's
	at      time.Time
}

// New returns the status page over m.
func New(m *health.Monitor, o Options) *Page {
	p := &Page{m: m, o: o, started: time.Now(), streams: make(chan struct{}, max(o.Streams, 1))}
	p.look.Store(&look{o.Details, o.ServiceInfo})
	return p
}

// look is what the page shows of outputs and of the service.
type look struct {
	details bool
	info    health.ServiceInfo
}

// Show changes Options' Details and ServiceInfo (a reload of the file),
// from the next answer on; the page's start time and its streams stay.
func (p *Page) Show(details bool, info health.ServiceInfo) {
	p.look.Store(&look{details, info})
	p.mu.Lock()
	p.cached = nil // built under the old look
	p.mu.Unlock()
}

func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	webpage.SetHeaders(w)
	h := w.Header()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, fmt.Sprintf("method %s not allowed: the status page only reads (use GET or HEAD)", r.Method), http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case "/ui/api/status":
		p.serveStatus(w, r)
	case "/ui/api/events":
		p.serveEvents(w, r)
	case "/":
		files.Serve(w, r, "index.html")
	default:
		name, ok := assetName(r.URL.Path)
		if !ok {
			http.NotFound(w, r)
			return
		}
		files.Serve(w, r, name)
	}
}

// assetName is the embedded file of a path under /ui/.
func assetName(urlPath string) (string, bool) {
	name, ok := strings.CutPrefix(urlPath, "/ui/")
	if !ok || name == "index.html" || name != path.Clean(name) {
		return "", false
	}
	if !files.Has(name) {
		return "", false
	}
	return name, true
}

func (p *Page) serveStatus(w http.ResponseWriter, r *http.Request) {
	// Stored, and asked again each time: an unchanged status is a 304.
	w.Header().Set("Cache-Control", "no-cache")
	p.status().Serve(w, r)
}

// version is what makes a status new: the events (every change of
// status, a check added, stopped or started over, a service started or
// exited) and the results (each run of each check adds one). A restarted
// agent begins both again, so the ETag names its start too. The drain
// and the stop change the status with no event of their own (the agent's
// stopping event comes before its Drain), so they count too.
type version struct {
	eventID, runs     uint64
	draining, stopped bool
}

// flags are the drain and the stop as an ETag spells them: -d, -s.
func (v version) flags() string {
	var f string
	if v.draining {
		f += "-d"
	}
	if v.stopped {
		f += "-s"
	}
	return f
}

// statusETag is the ETag of the status of version v of an agent started
// then.
func statusETag(started time.Time, v version) string {
	return fmt.Sprintf(`"%s-%d-%d%s"`, strconv.FormatInt(started.UnixNano(), 36), v.eventID, v.runs, v.flags())
}

// status is the status: the one shared, while it is recent and no event
// came since, or while nothing new came at all; else a new one from a
// Snapshot.
func (p *Page) status() *webpage.JSON {
	// The id is read before the Snapshot: the status shows at least what
	// the events up to it did, and a page that follows the events from it
	// sees the rest again, which changes nothing.
	id := p.m.LastEventID()
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.cached != nil && p.version.eventID == id && now.Sub(p.at) < statusMaxAge {
		return p.cached
	}
	snap := p.m.Snapshot()
	v := version{eventID: id, draining: snap.Draining, stopped: snap.Stopped}
	for _, c := range snap.Checks {
		v.runs += uint64(c.Runs)
	}
	if p.cached != nil && p.version == v {
		// Nothing new: the same status, with the same ETag, and the time
		// it was taken at.
		p.at = now
		return p.cached
	}
	lk := p.look.Load()
	st := client.Status{ServiceID: lk.info.ServiceID, Version: lk.info.Version, Started: p.started, Time: now,
		Draining: snap.Draining, Checks: make([]client.Check, len(snap.Checks)), LastEventID: id, Details: lk.details}
	for _, l := range []health.Level{health.Startup, health.Live, health.Ready} {
		v := client.Health{Level: l, OK: true}
		// The Checker reads the state the probes read, and withholds
		// reasons as they do.
		if err := p.m.Checker(l)(nil); err != nil {
			v.OK, v.Reason = false, err.Error()
		}
		st.Levels = append(st.Levels, v)
	}
	for i, c := range snap.Checks {
		st.Checks[i] = shownCheck(wire.Check(c, true), lk.details)
	}
	if p.o.Services != nil {
		// A copy, whose exits are the page's to redact.
		st.Services = slices.Clone(p.o.Services())
		for i, w := range st.Services {
			if w.LastExit != nil {
				e := p.shownEvent(*w.LastExit)
				st.Services[i].LastExit = &e
			}
		}
		if len(st.Services) == 1 {
			st.Workload = &st.Services[0]
		}
	}
	b, err := json.Marshal(st)
	if err != nil {
		// An observed value that cannot be encoded (a NaN): the status
		// without values, rather than none.
		for i := range st.Checks {
			st.Checks[i] = withoutValues(st.Checks[i])
		}
		b, _ = json.Marshal(st)
	}
	p.cached, p.version, p.at = webpage.NewJSON(statusETag(p.started, v), append(b, '\n')), v, now
	return p.cached
}

// shownCheck is c as the page shows it: without its outputs when details
// are off.
func shownCheck(c client.Check, details bool) client.Check {
	if details {
		return c
	}
	for i := range c.History {
		c.History[i] = withheld(c.History[i])
	}
	if c.Last != nil {
		last := withheld(*c.Last)
		c.Last = &last
	}
	return c
}

func withheld(r client.Result) client.Result {
	r.Output, r.ObservedValue, r.ObservedUnit = "", nil, ""
	return r
}

func withoutValues(c client.Check) client.Check {
	for i := range c.History {
		c.History[i].ObservedValue, c.History[i].ObservedUnit = nil, ""
	}
	if c.Last != nil {
		last := *c.Last
		last.ObservedValue, last.ObservedUnit = nil, ""
		c.Last = &last
	}
	return c
}

// shownEvent is e as the page shows it: with details off, without the
// output of a check's or a level's change (a check's output, or the reason
// that quotes one) and without a notice's data. The agent's own words (why
// it stops, why the checks started over, why the workload exited) stay.
func (p *Page) shownEvent(e health.Event) health.Event {
	if p.look.Load().details {
		return e
	}
	switch {
	case e.Type.Transition(), e.Type == health.EventLevelPassed, e.Type == health.EventLevelFailed:
		e.Output = ""
	case e.Type == health.EventNotice:
		e.Data = nil
	}
	return e
}

func (p *Page) serveEvents(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	after, err := wire.Cursor(r.URL.Query().Get("after"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "after: %v", err)
		return
	}
	if !wire.WantsStream(r) {
		evs := p.m.Events(after)
		out := make([]health.Event, len(evs))
		for i, e := range evs {
			out[i] = p.shownEvent(e)
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	if _, err := wire.Cursor(r.Header.Get("Last-Event-ID")); err != nil {
		// Bad input is told so before it is told to come back later.
		writeError(w, http.StatusBadRequest, "Last-Event-ID: %v", err)
		return
	}
	select {
	case p.streams <- struct{}{}:
		defer func() { <-p.streams }()
	default:
		h.Set("Retry-After", retryAfter)
		writeError(w, http.StatusServiceUnavailable, "too many event streams open (%d): try again later", cap(p.streams))
		return
	}
	if err := wire.Stream(w, r, p.m, after, p.shownEvent); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) { wire.WriteJSON(w, code, v) }

func writeError(w http.ResponseWriter, code int, format string, args ...any) {
	wire.WriteError(w, code, format, args...)
}

// The page's files, embedded: plain HTML, CSS and JavaScript, with no build
// step and nothing loaded from elsewhere.
//
//go:embed assets
var assetFS embed.FS

// files are the page's, read at the first request for one.
var files = webpage.NewFiles(assetFS, "assets")

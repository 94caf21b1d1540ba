package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
)

// R4 of the reliability suite: vitals run with 20 HTTP checks whose targets
// flap between passing and failing every 300ms, /readyz asked 2,000 times a
// second, and 5 readers of the events that drop their connection and come
// back at random, for 60s (10s in the short variant). Every reader sees
// every transition of every check exactly once and in order, as the targets'
// own record of their answers says, with ids that grow by one across its
// reconnections; /readyz answers nothing but 200 or 503; and once the load
// and the readers are gone, vitals's goroutines and heap are back where they
// were, and SIGTERM stops it with 0, leaving nothing behind.
func TestEveryEventReaderSeesEveryTransitionOfFlappingChecksUnderLoad(t *testing.T) {
	const (
		targets = 20
		flap    = 300 * time.Millisecond
		// A period under the flap gives every phase of a target at least one
		// run, so each phase is a transition. The timeout is the period, the
		// most it may be: a target answers at once, and a run that vitals
		// gives up on is a failure whatever the target answered (see
		// flapTarget.check).
		period  = 200 * time.Millisecond
		readers = 5
		rate    = 2000 // /readyz requests a second
		loaders = 8    // keep-alive connections the requests share
	)
	duration := 10 * time.Second
	if soak {
		duration = 60 * time.Second
	}

	// The targets: each answers 2xx or 5xx by its phase, its phases staggered
	// across the flap so that the checks change at different moments, and
	// records every answer it gave, in order: the ground truth. The code
	// numbers the answer (200 + n%100, or 500 + n%100), and a transition's
	// output quotes the code, so that each transition names the answer that
	// made it.
	var frozen atomic.Bool // from the end of the flapping on, every target answers 2xx
	epoch := time.Now()
	tgs := make([]*flapTarget, targets)
	mux := http.NewServeMux()
	for i := range tgs {
		offset := time.Duration(i) * flap / targets
		tg := &flapTarget{}
		tgs[i] = tg
		mux.HandleFunc(fmt.Sprintf("/t/%d", i), func(w http.ResponseWriter, r *http.Request) {
			failing := !frozen.Load() && (time.Since(epoch)+offset)/flap%2 == 1
			// Recorded before it is written: the next run of the check comes
			// only after this answer has reached it (or vitals gave up).
			n, code := tg.answer(failing)
			w.WriteHeader(code)
			if http.NewResponseController(w).Flush() != nil {
				tg.undelivered(n) // vitals gave up before the answer was written
			}
		})
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()

	dir := t.TempDir()
	addr, sock := freeAddr(t), filepath.Join(dir, "vitals.sock")
	var conf strings.Builder
	fmt.Fprintf(&conf, "listen: %s\napi: %s\nchecks:\n", addr, sock)
	for i := range targets {
		fmt.Fprintf(&conf, "  t-%02d:\n    http: {url: \"%s/t/%d\"}\n    period: %v\n    timeout: %v\n"+
			"    success-threshold: 1\n    failure-threshold: 1\n", i, srv.URL, i, period, period)
	}
	cmd := exec.Command(vitals, "run", "-c", writeConfig(t, conf.String()), "--log-level", "error")
	logs := &vitalstest.Buffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	apiTransport := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}
	defer apiTransport.CloseIdleConnections()
	api := &http.Client{Transport: apiTransport}
	probes := &http.Transport{MaxIdleConnsPerHost: loaders}
	defer probes.CloseIdleConnections()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := scrapeMetrics(probes, addr); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("vitals did not serve /metrics within 20s; logs:\n%s", logs)
		}
	}

	// Warm up: a second of the load and a reader, gone again, so that the
	// baseline holds what the first connections and requests leave for good
	// (pools, buffers, a grown event log), not what this test would leak.
	warm, stopWarm := context.WithCancel(context.Background())
	warmLoad := startReadyzLoad(warm, probes, addr, rate, loaders)
	warmReader := &flapReader{api: api}
	go warmReader.read(warm, func() uint64 { return 0 })
	time.Sleep(time.Second)
	stopWarm()
	warmLoad.wait()
	probes.CloseIdleConnections()
	apiTransport.CloseIdleConnections()
	time.Sleep(time.Second)
	before, err := scrapeMetrics(probes, addr)
	if err != nil {
		t.Fatal(err)
	}
	probes.CloseIdleConnections()

	// The load and the readers, for the duration.
	run, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	begin := time.Now()
	load := startReadyzLoad(run, probes, addr, rate, loaders)
	var final atomic.Uint64 // the last event id, once known: readers stop there
	rs := make([]*flapReader, readers)
	var reading sync.WaitGroup
	for i := range rs {
		rs[i] = &flapReader{api: api}
		reading.Go(func() { rs[i].read(context.Background(), final.Load) })
	}
	time.Sleep(duration)

	// The end: the targets stop flapping and answer 2xx, every check passes,
	// and the readers read up to the last event there is.
	frozen.Store(true)
	for deadline := time.Now().Add(20 * time.Second); readyz(addr) != http.StatusOK; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("/readyz did not pass within 20s of the targets answering 2xx; logs:\n%s", logs)
		}
	}
	time.Sleep(3 * period) // a run or two more of each check, all 2xx: no transition
	stopRun()
	sent := load.wait()
	loadTook := time.Since(begin)
	// vitals's own counts, as of the last event: a transition's event is
	// logged before its count grows, so the last id is read on both sides.
	var last uint64
	var scraped metricsScrape
	for {
		last = latestEventID(t, api)
		if scraped, err = scrapeMetrics(probes, addr); err != nil {
			t.Fatal(err)
		}
		if latestEventID(t, api) == last {
			break
		}
	}
	final.Store(last)
	readersDone := make(chan struct{})
	go func() { reading.Wait(); close(readersDone) }()
	select {
	case <-readersDone:
	case <-time.After(30 * time.Second):
		t.Fatalf("the readers did not reach event %d within 30s of the end", last)
	}

	t.Logf("%v: %d /readyz requests (%.0f/s): %d answered 200, %d 503, %d otherwise or not at all; %d events",
		loadTook.Round(time.Millisecond), sent.total(), float64(sent.total())/loadTook.Seconds(),
		sent.ok, sent.unavailable, sent.other, last)
	if sent.other > 0 {
		t.Errorf("%d /readyz requests were answered neither 200 nor 503, such as: %s", sent.other, sent.example)
	}
	for i, r := range rs {
		t.Logf("reader %d: %d connections (%d streams, %d long polls), last event %d", i, r.streams+r.polls, r.streams, r.polls, r.last)
		if len(r.errs) > 0 {
			t.Errorf("reader %d:\n%s", i, strings.Join(r.errs[:min(len(r.errs), 10)], "\n"))
		}
	}

	// Each reader saw what the others saw, and what the targets' answers
	// make of the checks; vitals's own counts of its results and
	// transitions, which do not come through the event log, agree.
	var changes, timedOut, gaveUp int
	for i, tg := range tgs {
		name := fmt.Sprintf("t-%02d", i)
		seen := rs[0].transitions[name]
		for j, r := range rs[1:] {
			if got := r.transitions[name]; !slices.Equal(got, seen) {
				t.Errorf("readers 0 and %d saw %s change differently:\n%v\n%v", j+1, name, seen, got)
			}
		}
		problems, late, abandoned := tg.check(seen)
		for _, p := range problems[:min(len(problems), 5)] {
			t.Errorf("%s: %s", name, p)
		}
		changes, timedOut, gaveUp = changes+len(seen), timedOut+late, gaveUp+abandoned
		counted := map[health.Status]int{}
		for _, tr := range seen {
			counted[tr.to]++
		}
		for _, to := range []health.Status{health.Pass, health.Warn, health.Fail} {
			series := fmt.Sprintf(`vitals_check_transitions_total{check=%q,to="%v"}`, name, to)
			if n := scraped.value(series); n != float64(counted[to]) {
				t.Errorf("%s is %v; the readers saw %d", series, n, counted[to])
			}
		}
		// Every 5xx the target gave is a failed run, taken or given up on;
		// every 2xx vitals did not take (given up on, or never written) is
		// one more; and a run that never reached the target is one more yet.
		passAnswers, failAnswers, lost2xx := tg.counts()
		passRuns := scraped.value(fmt.Sprintf(`vitals_check_runs_total{check=%q,result="pass"}`, name))
		failRuns := scraped.value(fmt.Sprintf(`vitals_check_runs_total{check=%q,result="fail"}`, name))
		if int(failRuns)-failAnswers < abandoned+lost2xx || int(passRuns) > passAnswers-abandoned-lost2xx {
			t.Errorf("%s: vitals recorded %v passed and %v failed runs; its target gave %d 2xx (%d not taken) and %d 5xx",
				name, passRuns, failRuns, passAnswers, abandoned+lost2xx, failAnswers)
		}
	}
	t.Logf("%d transitions, each seen by every reader; %d of them a run that timed out, and %d 2xx answers that vitals gave up on",
		changes, timedOut, gaveUp)

	// Goroutines and heap flat: back near the warm baseline once the load
	// and the readers are gone. Generous: a scrape, the checks' runs and the
	// last idle connections come and go.
	goBefore, heapBefore := before.value("go_goroutines"), before.value("go_memstats_heap_inuse_bytes")
	if goBefore < 0 || heapBefore < 0 {
		t.Fatalf("/metrics lacks go_goroutines or go_memstats_heap_inuse_bytes:\n%s", before)
	}
	var goAfter, heapAfter float64
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		probes.CloseIdleConnections()
		apiTransport.CloseIdleConnections()
		after, err := scrapeMetrics(probes, addr)
		if err != nil {
			t.Fatal(err)
		}
		goAfter, heapAfter = after.value("go_goroutines"), after.value("go_memstats_heap_inuse_bytes")
		if goAfter <= goBefore+20 && heapAfter <= max(2*heapBefore, heapBefore+16<<20) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("20s after the end: %v goroutines (%v before) and %.1f MB of heap in use (%.1f MB before)",
				goAfter, goBefore, heapAfter/(1<<20), heapBefore/(1<<20))
			break
		}
	}
	t.Logf("goroutines %v before, %v after; heap in use %.1f MB before, %.1f MB after",
		goBefore, goAfter, heapBefore/(1<<20), heapAfter/(1<<20))

	cmd.Process.Signal(syscall.SIGTERM)
	if code := exited(t, cmd); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0; logs:\n%s", code, logs)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("the API's socket is left after vitals stopped: %v", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Errorf("something still listens on %s after vitals stopped", addr)
	}
}

// flapTarget is one flapping HTTP target's record of what it answered.
type flapTarget struct {
	mu      sync.Mutex
	answers []flapAnswer // in the order given
}

type flapAnswer struct {
	code int
	lost bool // it could not be written: vitals had given up
}

// status is what the answer makes a run of the check: a failure when it
// could not be written, as vitals gave up on the run.
func (a flapAnswer) status() health.Status {
	if a.code < 300 && !a.lost {
		return health.Pass
	}
	return health.Fail
}

// answer records the next answer, 2xx or 5xx, and returns its number and code.
func (tg *flapTarget) answer(failing bool) (n, code int) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	n = len(tg.answers)
	code = 200 + n%100
	if failing {
		code = 500 + n%100
	}
	tg.answers = append(tg.answers, flapAnswer{code: code})
	return n, code
}

func (tg *flapTarget) undelivered(n int) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.answers[n].lost = true
}

// counts counts the 2xx and 5xx answers, and the 2xx that could not be
// written.
func (tg *flapTarget) counts() (pass, fail, lost2xx int) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	for _, a := range tg.answers {
		switch {
		case a.code >= 500:
			fail++
		case a.lost:
			pass++
			lost2xx++
		default:
			pass++
		}
	}
	return pass, fail, lost2xx
}

// check walks the transitions a reader saw of the target's check (both
// thresholds 1) along the target's answers, and says what does not add up:
// each transition must be made by the answer its output quotes, the first
// after the one before, and the answers between must leave the check as it
// was. A run that vitals gave up on is a failure whatever the target
// answered: a transition that says a run timed out is taken as it is, the
// answers up to the next transition being unknown to vitals, and a 2xx
// between two transitions that leaves a failing check failing is one that
// vitals gave up on. It returns how many of each there were.
func (tg *flapTarget) check(seen []flapTransition) (problems []string, timedOut, gaveUp int) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	state := health.Pending
	pos := -1     // the answer that made the last transition
	known := true // every answer since pos was a result
	keep := func(end int) {
		for j := pos + 1; j < end; j++ {
			switch st := tg.answers[j].status(); {
			case st == state:
			case st == health.Pass && state == health.Fail:
				gaveUp++
			default:
				problems = append(problems, fmt.Sprintf("answer %d (%d) makes it %v, and no event says so", j, tg.answers[j].code, st))
			}
		}
	}
	for _, tr := range seen {
		if tr.from != state {
			problems = append(problems, fmt.Sprintf("event %d: %v->%v while it was %v", tr.id, tr.from, tr.to, state))
		}
		var code int
		switch {
		case tr.to == health.Fail && strings.HasPrefix(tr.output, "timed out after "):
			timedOut++
			state, known = tr.to, false
			continue
		case tr.to == health.Pass && scanCode(tr.output, "HTTP %d in ", &code):
		case tr.to == health.Fail && scanCode(tr.output, "HTTP probe failed with statuscode: %d", &code):
		default:
			problems = append(problems, fmt.Sprintf("event %d: %v->%v says %q", tr.id, tr.from, tr.to, tr.output))
			state, known = tr.to, false
			continue
		}
		// The only answer after pos, among the next hundred, with that code.
		k := pos + 1 + ((code-pos-1)%100+100)%100
		if k >= len(tg.answers) || tg.answers[k].code != code || tg.answers[k].status() != tr.to {
			problems = append(problems, fmt.Sprintf("event %d: %v->%v on a %d that the target did not give after its answer %d",
				tr.id, tr.from, tr.to, code, pos))
			state, known = tr.to, false
			continue
		}
		if known {
			keep(k)
		}
		pos, state, known = k, tr.to, true
	}
	if known {
		keep(len(tg.answers))
	}
	return problems, timedOut, gaveUp
}

func scanCode(output, format string, code *int) bool {
	_, err := fmt.Sscanf(output, format, code)
	return err == nil
}

// flapReader follows the management API's events as a client that comes
// and goes does: an event stream dropped after 0.2 to 2s, or now and then a
// few long polls, each resuming after the last event it saw.
type flapReader struct {
	api         *http.Client
	last        uint64                      // the id of the last event seen
	transitions map[string][]flapTransition // by check, in the order seen
	streams     int
	polls       int
	errs        []string
}

// read follows the events until ctx ends, or until it has seen the id that
// final returns once it is not 0.
func (r *flapReader) read(ctx context.Context, final func() uint64) {
	r.transitions = map[string][]flapTransition{}
	done := func() bool { f := final(); return ctx.Err() != nil || f != 0 && r.last >= f }
	for !done() && len(r.errs) < 10 {
		if rand.IntN(4) == 0 {
			r.poll(ctx, done)
		} else {
			r.stream(ctx, done)
		}
	}
}

// stream reads server-sent events for a random while, then drops the
// connection, whatever it was in the middle of.
func (r *flapReader) stream(ctx context.Context, done func() bool) {
	r.streams++
	ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond+rand.N(1800*time.Millisecond))
	defer cancel()
	// It resumes as a browser's EventSource does, with Last-Event-ID, or
	// with the cursor in the URL.
	url := "http://vitals/v1/events"
	byHeader := rand.IntN(2) == 0
	if !byHeader {
		url += fmt.Sprintf("?after=%d", r.last)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	if byHeader && r.last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(r.last, 10))
	}
	res, err := r.api.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			r.errs = append(r.errs, fmt.Sprintf("connect: %v", err))
		}
		return
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		r.errs = append(r.errs, fmt.Sprintf("stream: %s", res.Status))
		return
	}
	lines := bufio.NewScanner(res.Body)
	var id, data string
	for !done() && lines.Scan() {
		switch line := lines.Text(); {
		case line == "": // the end of an event: only a whole one counts
			if data != "" {
				r.see(id, data)
			}
			id, data = "", ""
		case strings.HasPrefix(line, "id: "):
			id = line[len("id: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		}
	}
}

// poll asks for the events after the last one, waiting up to a second for
// one, a few times.
func (r *flapReader) poll(ctx context.Context, done func() bool) {
	for range 1 + rand.IntN(5) {
		if done() {
			return
		}
		r.polls++
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://vitals/v1/events?after=%d&wait=1s", r.last), nil)
		res, err := r.api.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				r.errs = append(r.errs, fmt.Sprintf("poll: %v", err))
			}
			return
		}
		var evs []json.RawMessage
		err = json.NewDecoder(res.Body).Decode(&evs)
		res.Body.Close()
		if err != nil {
			r.errs = append(r.errs, fmt.Sprintf("poll: %s: %v", res.Status, err))
			return
		}
		for _, data := range evs {
			r.see("", string(data))
		}
	}
}

// flapTransition is a check's transition as a reader saw it.
type flapTransition struct {
	id       uint64
	from, to health.Status
	output   string
}

// see takes one event: its id must follow the last one seen, and the id: line
// of a stream must say the same.
func (r *flapReader) see(id, data string) {
	var e health.Event
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		r.errs = append(r.errs, fmt.Sprintf("event %q: %v", data, err))
		return
	}
	if id != "" && id != strconv.FormatUint(e.ID, 10) {
		r.errs = append(r.errs, fmt.Sprintf("id: %s for event %d", id, e.ID))
	}
	if e.ID != r.last+1 {
		r.errs = append(r.errs, fmt.Sprintf("event %d after event %d", e.ID, r.last))
	}
	r.last = e.ID
	if e.Type.Transition() {
		r.transitions[e.Check] = append(r.transitions[e.Check], flapTransition{e.ID, e.From, e.To, e.Output})
	}
}

// latestEventID is the id of the agent's latest event.
func latestEventID(t *testing.T, api *http.Client) uint64 {
	t.Helper()
	res, err := api.Get("http://vitals/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var evs []health.Event
	if err := json.NewDecoder(res.Body).Decode(&evs); err != nil || len(evs) == 0 {
		t.Fatalf("events: %d, %v", len(evs), err)
	}
	return evs[len(evs)-1].ID
}

// readyzAnswers counts how /readyz answered.
type readyzAnswers struct {
	ok, unavailable, other int
	example                string // of the others
}

func (a readyzAnswers) total() int { return a.ok + a.unavailable + a.other }

// readyzLoad is /readyz asked at a steady rate over a few keep-alive connections.
type readyzLoad struct {
	mu   sync.Mutex
	seen readyzAnswers
	wg   sync.WaitGroup
}

func startReadyzLoad(ctx context.Context, tr *http.Transport, addr string, rate, conns int) *readyzLoad {
	l := &readyzLoad{}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	every := time.Second * time.Duration(conns) / time.Duration(rate)
	for range conns {
		l.wg.Go(func() {
			var seen readyzAnswers
			defer func() {
				l.mu.Lock()
				defer l.mu.Unlock()
				l.seen.ok += seen.ok
				l.seen.unavailable += seen.unavailable
				l.seen.other += seen.other
				if l.seen.example == "" {
					l.seen.example = seen.example
				}
			}()
			for next := time.Now(); ctx.Err() == nil; {
				res, err := client.Get("http://" + addr + "/readyz")
				switch {
				case err != nil:
					seen.other++
					seen.example = err.Error()
				case res.StatusCode == http.StatusOK:
					seen.ok++
				case res.StatusCode == http.StatusServiceUnavailable:
					seen.unavailable++
				default:
					seen.other++
					seen.example = res.Status
				}
				if err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
				// A little behind (a sleep that overslept) is made up at
				// once; far behind (the machine was busy) is let go rather
				// than made up in a burst.
				next = next.Add(every)
				switch wait := time.Until(next); {
				case wait > 0:
					time.Sleep(wait)
				case wait < -100*time.Millisecond:
					next = time.Now()
				}
			}
		})
	}
	return l
}

// wait waits for the load to end with its context and says how it went.
func (l *readyzLoad) wait() readyzAnswers {
	l.wg.Wait()
	return l.seen
}

// metricsScrape is a scrape of /metrics, in Prometheus's text format.
type metricsScrape string

func scrapeMetrics(tr *http.Transport, addr string) (metricsScrape, error) {
	res, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("http://" + addr + "/metrics")
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("/metrics: %s", res.Status)
	}
	return metricsScrape(b), err
}

// value is the sample of series (a name, with its labels as written), or -1
// when there is none.
func (m metricsScrape) value(series string) float64 {
	for line := range strings.Lines(string(m)) {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vitals-dev/vitals/bench/internal/harness"
	"github.com/vitals-dev/vitals/health"
)

// P4 measures how soon a status change reaches whoever waits for it, from
// the moment the engine recorded the result that decided it: an event's
// Time, which the Monitor stamps when it records the result, under its lock,
// just before it appends the event (a Result's Time is when its run began,
// which would add the run itself). Everything runs on this machine, so wall
// clocks agree.
//
//   - library: a Monitor in this process with one check that the benchmark
//     flips between passing and failing (period 50ms, thresholds 1), and a
//     goroutine blocked in WaitEvents; also from the moment the checker
//     returned (the Result's Time + Duration, through WithRecorder).
//   - agent: vitals run (pinned to a core) with an http check on a target in
//     this process that the benchmark flips, and two readers of /v1/events on
//     the unix socket at once: a server-sent event stream and a long poll
//     (?after=N&wait=30s); the latency is when the reader has the event.
//   - restart: vitals run with bench/workload as its workload and a live http
//     check with on-failure: restart; the benchmark makes the target fail,
//     and the workload notes when SIGTERM reaches it.
//
// For the agent's samples over their target, it logs in how many vitals or
// this process waited for a core meanwhile: what the machine took.
func init() {
	register(experiment{ID: "P4", What: "latency from the deciding result to the event at a reader, and to the workload's SIGTERM", Run: runP4})
}

const (
	p4Period   = 50 * time.Millisecond // the flipped checks' period
	p4Core     = 1                     // the core vitals runs on
	p4EventP99 = 2 * time.Millisecond
	p4Restart  = 10 * time.Millisecond
)

func runP4(ctx context.Context, env *harness.Env) ([]harness.Row, error) {
	flips, restarts := 200, 50
	if env.Quick {
		flips, restarts = 6, 3
	}
	if _, err := buildVitals(ctx, env); err != nil {
		return nil, err
	}
	workload, err := env.Build(ctx, "workload", "bench", "./workload")
	if err != nil {
		return nil, err
	}
	var rows []harness.Row
	row := func(what string, ds []time.Duration, target time.Duration, targetText string) {
		p50, p99 := harness.Percentile(ds, 50), harness.Percentile(ds, 99)
		rows = append(rows, harness.Row{ID: "P4", What: what,
			Vitals: fmt.Sprintf("p50 %s, p99 %s (%d)", harness.Millis(p50, 3), harness.Millis(p99, 3), len(ds)),
			Target: targetText, Met: len(ds) > 0 && p99 <= target})
	}

	env.Logf("P4: library, %d flips", flips)
	recorded, returned, err := p4Library(ctx, flips)
	if err != nil {
		return rows, fmt.Errorf("library: %w", err)
	}
	row("library: result recorded → WaitEvents returns", recorded, p4EventP99, "p99 ≤ 2 ms")
	row("library: checker returned → WaitEvents returns", returned, p4EventP99, "p99 ≤ 2 ms")

	env.Logf("P4: agent, %d flips, SSE and long-poll readers", flips)
	sse, poll, err := p4Agent(ctx, env, flips)
	if err != nil {
		return rows, fmt.Errorf("agent: %w", err)
	}
	row("agent: result recorded → event read from /v1/events, SSE", sse, p4EventP99, "p99 ≤ 2 ms")
	row("agent: result recorded → event read from /v1/events, long poll", poll, p4EventP99, "p99 ≤ 2 ms")

	env.Logf("P4: agent, %d restarts on a check's failure", restarts)
	term, err := p4Restarts(ctx, env, workload, restarts)
	if err != nil {
		return rows, fmt.Errorf("restart: %w", err)
	}
	row("agent: failing result recorded → SIGTERM reaches the workload (on-failure: restart)", term, p4Restart, "p99 ≤ 10 ms")
	return rows, nil
}

var errP4Flip = errors.New("flipped to failing")

// p4Library flips a check of a Monitor in this process flips times, and
// returns, for each flip, how long after the event's time and after the
// checker's return a goroutine blocked in WaitEvents had it.
func p4Library(ctx context.Context, flips int) (recorded, returned []time.Duration, err error) {
	var failing atomic.Bool
	var mu sync.Mutex
	var ends []time.Time // the ends of the runs that changed the status, in order
	m := health.New(
		health.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), // written, not shown
		health.WithRecorder(func(r health.Recorded) {
			if r.From != r.To {
				mu.Lock()
				ends = append(ends, r.Result.Time.Add(r.Result.Duration))
				mu.Unlock()
			}
		}))
	err = m.Add(health.Check{Name: "flip", Level: health.Ready, Period: p4Period, SuccessThreshold: 1, FailureThreshold: 1,
		Checker: health.CheckerFunc(func(context.Context) error {
			if failing.Load() {
				return errP4Flip
			}
			return nil
		})})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	got := make(chan p4Received, 1024)
	go func() {
		for after := uint64(0); ; {
			evs, err := m.WaitEvents(ctx, after)
			at := time.Now()
			if err != nil {
				return
			}
			for _, e := range evs {
				select {
				case got <- p4Received{e, at}:
				case <-ctx.Done():
					return
				}
				after = e.ID
			}
		}
	}()
	m.Start(ctx)

	var transitions []p4Received // every check-passed or -failed, the first (pending → pass) too
	var last uint64
	want := health.EventCheckPassed
	for i := 0; i <= flips; i++ {
		if i > 0 {
			failing.Store(i%2 == 1)
			want = p4Expect(i%2 == 1)
		}
		r, err := p4Await(ctx, got, 10*time.Second, func(e health.Event) bool { return e.Type == want && e.ID > last })
		if err != nil {
			return nil, nil, fmt.Errorf("flip %d: %w", i, err)
		}
		transitions = append(transitions, r)
		last = r.ev.ID
		p4Pause()
	}
	cancel()
	<-m.Done()
	mu.Lock()
	defer mu.Unlock()
	if len(ends) != len(transitions) {
		return nil, nil, fmt.Errorf("%d transitions recorded, %d events read", len(ends), len(transitions))
	}
	for i, r := range transitions[1:] { // the first is the check's start, not a flip
		recorded = append(recorded, r.at.Sub(r.ev.Time))
		returned = append(returned, r.at.Sub(ends[i+1]))
	}
	return recorded, returned, nil
}

// p4Agent runs vitals with one http check on a target it flips flips times,
// and returns how long after each event's time the SSE reader and the
// long-poll reader had it.
func p4Agent(ctx context.Context, env *harness.Env, flips int) (sse, poll []time.Duration, err error) {
	dir, err := os.MkdirTemp("", "vitals-bench-p4")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	target, err := harness.StartTarget()
	if err != nil {
		return nil, nil, err
	}
	defer target.Close()
	cfg := fmt.Sprintf(`checks:
  flip:
    level: ready
    http: {url: "%s"}
    period: %v
    failure-threshold: 1
`, target.URL, p4Period)
	p, client, err := p4StartVitals(ctx, env, dir, cfg)
	if err != nil {
		return nil, nil, err
	}
	defer p.Stop(10 * time.Second)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sseGot, pollGot := make(chan p4Received, 1024), make(chan p4Received, 1024)
	errs := make(chan error, 2)
	go func() { errs <- p4Stream(ctx, client, sseGot) }()
	go func() { errs <- p4Poll(ctx, client, pollGot) }()

	// What other processes took from vitals and from this process's readers
	// during each flip (time their threads were runnable but waited for a
	// core), to tell the machine's share of the slow samples.
	var waited []time.Duration
	var last uint64
	want := health.EventCheckPassed
	for i := 0; i <= flips; i++ {
		q0 := p4Waited(p)
		if i > 0 {
			target.SetFailing(i%2 == 1)
			want = p4Expect(i%2 == 1)
		}
		is := func(e health.Event) bool { return e.Type == want && e.Check == "flip" && e.ID > last }
		s, err := p4Await(ctx, sseGot, 10*time.Second, is)
		if err != nil {
			return nil, nil, fmt.Errorf("flip %d, SSE: %w%s", i, err, p4Failed(errs))
		}
		l, err := p4Await(ctx, pollGot, 10*time.Second, is)
		if err != nil {
			return nil, nil, fmt.Errorf("flip %d, long poll: %w%s", i, err, p4Failed(errs))
		}
		if s.ev.ID != l.ev.ID {
			return nil, nil, fmt.Errorf("flip %d: the SSE reader got event %d, the long poll %d", i, s.ev.ID, l.ev.ID)
		}
		last = s.ev.ID
		if i > 0 {
			sse = append(sse, s.at.Sub(s.ev.Time))
			poll = append(poll, l.at.Sub(l.ev.Time))
			waited = append(waited, p4Waited(p)-q0)
		}
		p4Pause()
	}
	p4Slow(env, "SSE", sse, waited, p4EventP99)
	p4Slow(env, "long poll", poll, waited, p4EventP99)
	return sse, poll, nil
}

// p4Restarts runs vitals with bench/workload as its workload and a live http
// check that restarts it on failure, makes the check fail n times, and
// returns how long after each check-failed event's time SIGTERM reached the
// workload.
func p4Restarts(ctx context.Context, env *harness.Env, workload string, n int) ([]time.Duration, error) {
	dir, err := os.MkdirTemp("", "vitals-bench-p4")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	target, err := harness.StartTarget()
	if err != nil {
		return nil, err
	}
	defer target.Close()
	terms := filepath.Join(dir, "sigterm.log")
	// The backoff only spaces the restarts: the check stays failing until the
	// workload has exited, and passes again when the next one runs.
	cfg := fmt.Sprintf(`service:
  command: [%q, %q]
  backoff: {initial: 100ms, max: 100ms}
checks:
  target:
    level: live
    http: {url: "%s"}
    period: %v
    failure-threshold: 1
    on-failure: restart
`, workload, terms, target.URL, p4Period)
	p, client, err := p4StartVitals(ctx, env, dir, cfg)
	if err != nil {
		return nil, err
	}
	defer p.Stop(10 * time.Second)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan p4Received, 1024)
	errs := make(chan error, 1)
	go func() { errs <- p4Stream(ctx, client, got) }()
	await := func(what string, is func(health.Event) bool) (health.Event, error) {
		r, err := p4Await(ctx, got, 10*time.Second, is)
		if err != nil {
			return health.Event{}, fmt.Errorf("%s: %w%s", what, err, p4Failed(errs))
		}
		return r.ev, nil
	}

	var ds, waited []time.Duration
	var last uint64
	for i := range n {
		passed, err := await("the check to pass", func(e health.Event) bool {
			return e.Type == health.EventCheckPassed && e.Check == "target" && e.ID > last
		})
		if err != nil {
			return nil, fmt.Errorf("restart %d: %w", i, err)
		}
		p4Pause()
		q0 := p4Waited(p)
		target.SetFailing(true)
		failed, err := await("the check to fail", func(e health.Event) bool {
			return e.Type == health.EventCheckFailed && e.Check == "target" && e.ID > passed.ID
		})
		if err != nil {
			return nil, fmt.Errorf("restart %d: %w", i, err)
		}
		exited, err := await("the workload to exit", func(e health.Event) bool {
			return e.Type == health.EventServiceExited && e.ID > failed.ID
		})
		target.SetFailing(false)
		if err != nil {
			return nil, fmt.Errorf("restart %d: %w", i, err)
		}
		if exited.Reason != "check target failed" {
			return nil, fmt.Errorf("restart %d: the workload exited for %q, not the check", i, exited.Reason)
		}
		at, err := p4TermTime(terms, exited.PID)
		if err != nil {
			return nil, fmt.Errorf("restart %d: %w", i, err)
		}
		ds = append(ds, at.Sub(failed.Time))
		// The workload has exited: its own waits are gone with it.
		waited = append(waited, p4Waited(p)-q0)
		last = exited.ID
	}
	p4Slow(env, "restart", ds, waited, p4Restart)
	return ds, nil
}

// p4Slow logs how many of ds are over limit, and in how many of those
// samples the processes involved waited for a core for 1ms or more (waited,
// by sample): on a shared machine, what other processes took.
func p4Slow(env *harness.Env, name string, ds, waited []time.Duration, limit time.Duration) {
	slow, queued := 0, 0
	for i, d := range ds {
		if d > limit {
			slow++
			if waited[i] >= time.Millisecond {
				queued++
			}
		}
	}
	env.Logf("P4: %s: %d of %d over %v; in %d of those, vitals or this process waited 1ms or more for a core",
		name, slow, len(ds), limit, queued)
}

// p4TermTime reads when SIGTERM reached the workload of pid, from the lines
// bench/workload appends to file.
func p4TermTime(file string, pid int) (time.Time, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return time.Time{}, err
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == strconv.Itoa(pid) {
			ns, err := strconv.ParseInt(f[1], 10, 64)
			return time.Unix(0, ns), err
		}
	}
	return time.Time{}, fmt.Errorf("the workload of pid %d noted no SIGTERM in %s", pid, file)
}

// p4APIWait bounds the wait for the start of the management API's answer
// (its headers): the long poll's wait=30s and some. The client has no
// Timeout of its own, since the event stream it reads does not end; the
// readers' context ends it.
const p4APIWait = 35 * time.Second

// p4StartVitals starts `vitals run` on cfg (vitals.yaml without its listen
// and api) in dir, pinned to p4Core, its log going to dir/vitals.log as a
// container's would go to a file. It returns once the management API
// answers, with a client of it.
func p4StartVitals(ctx context.Context, env *harness.Env, dir, cfg string) (*harness.Proc, *http.Client, error) {
	listen, err := harness.LoopbackAddr()
	if err != nil {
		return nil, nil, err
	}
	p, err := startVitals(ctx, env, vitalsRun{dir: dir, listen: listen, config: cfg, cpu: p4Core, logFile: "vitals.log"})
	if err != nil {
		return nil, nil, err
	}
	failed := func(err error) (*harness.Proc, *http.Client, error) {
		p.Stop(time.Second)
		log, _ := os.ReadFile(filepath.Join(dir, "vitals.log"))
		return nil, nil, fmt.Errorf("%w\n%s", err, log)
	}
	sock := vitalsSocket(dir)
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		ResponseHeaderTimeout: p4APIWait,
	}}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := harness.WaitHTTP(wait, p, "http://"+listen+"/livez", http.StatusOK, 20*time.Millisecond); err != nil {
		return failed(err)
	}
	ask := &http.Client{Transport: client.Transport, Timeout: time.Second}
	for {
		resp, err := ask.Get("http://vitals/v1/health?level=live")
		if err == nil {
			resp.Body.Close()
			return p, client, nil
		}
		if werr := harness.Sleep(wait, 20*time.Millisecond); werr != nil {
			return failed(fmt.Errorf("the management API on %s: %w (last error: %v)", sock, werr, err))
		}
	}
}

// p4Received is an event and when a reader had it.
type p4Received struct {
	ev health.Event
	at time.Time
}

// p4Stream reads /v1/events as server-sent events from the first one on,
// sending each to got with the moment its data line was read, until ctx
// ends.
func p4Stream(ctx context.Context, client *http.Client, got chan<- p4Received) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://vitals/v1/events", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("SSE: %s", resp.Status)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadSlice('\n')
		at := time.Now()
		if err != nil {
			return fmt.Errorf("SSE: %w", err)
		}
		if data, ok := strings.CutPrefix(string(line), "data: "); ok {
			var e health.Event
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				return fmt.Errorf("SSE: %w", err)
			}
			select {
			case got <- p4Received{e, at}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// p4Poll reads /v1/events by long polls (?after=N&wait=30s) from the first
// event on, sending each event to got with the moment its answer was read,
// until ctx ends.
func p4Poll(ctx context.Context, client *http.Client, got chan<- p4Received) error {
	for after := uint64(0); ; {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://vitals/v1/events?after=%d&wait=30s", after), nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("long poll: %w", err)
		}
		body, err := io.ReadAll(resp.Body)
		at := time.Now()
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("long poll: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("long poll: %s: %s", resp.Status, body)
		}
		var evs []health.Event
		if err := json.Unmarshal(body, &evs); err != nil {
			return fmt.Errorf("long poll: %w", err)
		}
		for _, e := range evs {
			select {
			case got <- p4Received{e, at}:
			case <-ctx.Done():
				return ctx.Err()
			}
			after = e.ID
		}
	}
}

// p4Await returns the first event from got that is, skipping the others, or
// an error after timeout.
func p4Await(ctx context.Context, got <-chan p4Received, timeout time.Duration, is func(health.Event) bool) (p4Received, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case r := <-got:
			if is(r.ev) {
				return r, nil
			}
		case <-t.C:
			return p4Received{}, fmt.Errorf("no such event in %v", timeout)
		case <-ctx.Done():
			return p4Received{}, ctx.Err()
		}
	}
}

// p4Failed says why a reader stopped, if one did.
func p4Failed(errs <-chan error) string {
	select {
	case err := <-errs:
		return fmt.Sprintf(" (a reader stopped: %v)", err)
	default:
		return ""
	}
}

// p4Expect is the event a flip to failing, or back to passing, makes.
func p4Expect(failing bool) health.EventType {
	if failing {
		return health.EventCheckFailed
	}
	return health.EventCheckPassed
}

// p4Waited is how long vitals's threads and this process's have waited for
// a core so far: what other processes took from them. It is a figure for the
// log only, left at 0 where /proc does not tell.
func p4Waited(vitals *harness.Proc) time.Duration {
	_, v, _ := harness.Schedstat(vitals.Pid())
	_, b, _ := harness.Schedstat(os.Getpid())
	return v + b
}

// p4Pause waits a random part of a period before the next flip, so that
// flips do not keep the same phase against the check's runs.
func p4Pause() { time.Sleep(rand.N(p4Period)) }

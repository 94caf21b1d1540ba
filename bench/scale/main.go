// Command scale is the program of bench's P3: a service that imports the
// health library and gives one Monitor 10,000 ready checks, each a checker
// that returns nil, every 10s.
//
//	scale -out FILE [-checks 10000] [-period 10s] [-spread 0] [-fill 0] [-floor]
//	      [-cpuprofile FILE] [-memprofile FILE]
//
// It starts the Monitor and waits until every check has run once, then
// writes {"phase":"warm"} as a line of FILE. Between SIGUSR1 and SIGUSR2 (the
// window bench measures its CPU time over) it notes when each run began;
// after SIGUSR2 it writes the window's line: the runs, their lateness, and the
// heap after a garbage collection. With -fill N it then runs every check at
// once (Monitor.RunNow) until each keeps N results, as after N periods, and
// writes the heap again ({"phase":"full"}). It runs until SIGTERM.
//
// With -spread 0 the Monitor has the default jitter, as a service would: the
// checks all run at Start, and then each at its phase, one of four in the
// first tenth of the period. The engine does not say which phase a check
// drew, so lateness is measured with
// -spread D instead: no jitter, and check i's initial delay is 1s + D×i/checks
// (the second is for Start to finish), so that run k of check i is planned
// at exactly start + its initial delay + k×period, and its lateness is when
// its checker was called minus that.
//
// With -floor it runs no Monitor but the least a goroutine and a timer per
// check can do, the same way: what any scheduler built like the kubelet's
// prober (a goroutine per check) costs on this machine before it does
// anything of its own. -cpuprofile profiles the window; -memprofile writes
// the heap's profile after it (and after -fill).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vitals-dev/vitals/bench/internal/harness"
	"github.com/vitals-dev/vitals/health"
)

func main() {
	out := flag.String("out", "", "the file to write the phases' lines to (required)")
	checks := flag.Int("checks", 10000, "how many checks")
	period := flag.Duration("period", 10*time.Second, "every check's period")
	spread := flag.Duration("spread", 0, "no jitter, and initial delays spread over this (0: the default jitter)")
	fill := flag.Int("fill", 0, "after the window, run each check until it keeps this many results (0: do not)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the window to this file")
	memProfile := flag.String("memprofile", "", "write a heap profile at the window's end (and FILE.full after -fill) to this file")
	floor := flag.Bool("floor", false, "run no Monitor: a goroutine and a timer per check, and nothing else")
	flag.Parse()
	if *out == "" || *checks < 1 || *period <= 0 || *spread < 0 || *fill < 0 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: scale -out FILE [-checks 10000] [-period 10s] [-spread 0] [-fill 0] [-floor]")
		os.Exit(2)
	}
	if err := run(*out, *checks, *period, *spread, *fill, *floor, profiles{*cpuProfile, *memProfile}); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

// Line is one line of the output file; bench reads it back.
type Line struct {
	Phase string `json:"phase"` // warm, window, full
	// window
	Runs      int   `json:"runs,omitempty"`      // runs begun in the window
	LateP50ns int64 `json:"lateP50ns,omitempty"` // with -spread only
	LateP99ns int64 `json:"lateP99ns,omitempty"`
	LateMaxns int64 `json:"lateMaxns,omitempty"`
	// window and full: after runtime.GC
	HeapAlloc  uint64 `json:"heapAlloc,omitempty"`
	HeapInuse  uint64 `json:"heapInuse,omitempty"`
	StackInuse uint64 `json:"stackInuse,omitempty"`
	Sys        uint64 `json:"sys,omitempty"`
	Goroutines int    `json:"goroutines,omitempty"`
	Results    int    `json:"results,omitempty"` // results kept, over every check
}

// profiles are where the profiles go; "" for none.
type profiles struct{ cpu, mem string }

func run(out string, n int, period, spread time.Duration, fill int, floor bool, prof profiles) error {
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	write := func(l Line) error {
		b, _ := json.Marshal(l)
		_, err := f.Write(append(b, '\n'))
		return err
	}
	signals := make(chan os.Signal, 3)
	signal.Notify(signals, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTERM)

	s := &sampler{n: n, period: period, ran: make([]atomic.Bool, n), warm: make(chan struct{})}
	if spread > 0 {
		s.delay = make([]time.Duration, n)
		for i := range n {
			s.delay[i] = headStart + spread*time.Duration(i)/time.Duration(n)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var m *health.Monitor
	var done <-chan struct{}
	if floor {
		done = runFloor(ctx, s)
	} else if m, err = startMonitor(ctx, s); err != nil {
		return err
	} else {
		done = m.Done()
	}
	if spread > 0 {
		// Room for every run of a 5-minute window, so that taking a sample
		// never allocates while the window lasts.
		s.late = make([]time.Duration, 0, n*int(5*time.Minute/period+2))
	}

	warm := s.warm
	for phase := "warm"; ; {
		select {
		case <-warm:
			if err := write(Line{Phase: "warm"}); err != nil {
				return err
			}
			warm = nil // a nil channel: this case never fires again
			continue
		case sig := <-signals:
			switch sig {
			case syscall.SIGTERM:
				cancel()
				<-done
				return nil
			case syscall.SIGUSR1:
				if phase != "warm" {
					continue
				}
				phase = "window"
				if prof.cpu != "" {
					pf, err := os.Create(prof.cpu)
					if err != nil {
						return err
					}
					defer pf.Close()
					if err := pprof.StartCPUProfile(pf); err != nil {
						return err
					}
				}
				s.collect(true)
			case syscall.SIGUSR2:
				if phase != "window" {
					continue
				}
				phase = "done"
				l := s.collect(false)
				pprof.StopCPUProfile()
				s.late = nil // the samples are the benchmark's, not the Monitor's
				if m != nil {
					for _, c := range m.Snapshot().Checks {
						l.Results += len(c.History)
					}
				}
				heap(&l)
				if err := writeHeapProfile(prof.mem); err != nil {
					return err
				}
				if err := write(l); err != nil {
					return err
				}
				if fill == 0 || m == nil {
					continue
				}
				kept, err := fillHistories(m, n, fill)
				if err != nil {
					return err
				}
				full := Line{Phase: "full", Results: kept}
				heap(&full)
				if prof.mem != "" {
					if err := writeHeapProfile(prof.mem + ".full"); err != nil {
						return err
					}
				}
				if err := write(full); err != nil {
					return err
				}
			}
		}
	}
}

// headStart is added to every initial delay with -spread: the time Start
// may take to start 10,000 workers, and the startup level to pass (it has no
// check, so it passes at the end of Start).
const headStart = time.Second

// startMonitor adds s.n checks to a new Monitor and starts it: without jitter
// and with s.delay as their initial delays when there are some, with the
// default jitter otherwise. Transitions are logged to nowhere: a service
// would log 10,000 "check passed" lines once, at start.
func startMonitor(ctx context.Context, s *sampler) (*health.Monitor, error) {
	// The planned times need the moment Start counts from; the default
	// jitter's runs have none to compare with, and keep the system clock.
	clock := &startClock{}
	opts := []health.Option{health.WithLogger(slog.New(slog.DiscardHandler))}
	if s.delay != nil {
		opts = append(opts, health.WithClock(clock), health.WithJitter(0))
	}
	m := health.New(opts...)
	for i := range s.n {
		c := health.Check{Name: fmt.Sprintf("check-%05d", i), Level: health.Ready, Period: s.period,
			Checker: health.CheckerFunc(func(context.Context) error { s.ran1(i); return nil })}
		if s.delay != nil {
			c.InitialDelay = s.delay[i]
		}
		if err := m.Add(c); err != nil {
			return nil, err
		}
	}
	before := time.Now()
	m.Start(ctx)
	if s.delay != nil {
		s.start = clock.first()
		if s.start.Before(before) || s.start.After(time.Now()) {
			return nil, errors.New("the clock's first reading was not Start's: lateness would be measured from the wrong moment")
		}
		// A ready check that finds startup not yet passed runs once it has,
		// and every period from then (the worker's plan starts over).
		if took := m.Snapshot().StartupPassed.Sub(s.start); took >= headStart {
			return nil, fmt.Errorf("startup passed %v after Start, later than the %v head start: the first checks' plans would start over", took, headStart)
		}
	}
	return m, nil
}

// runFloor is the least that a goroutine and a timer per check can do: each
// of s.n goroutines sleeps until its next planned time (start, plus its
// initial delay, plus a period for each run before), calls the checker, and
// again, until ctx ends. No timeout, no state, no history. It returns a
// channel closed once every goroutine has returned.
func runFloor(ctx context.Context, s *sampler) <-chan struct{} {
	s.start = time.Now()
	var wg sync.WaitGroup
	for i := range s.n {
		next := s.start
		if s.delay != nil {
			next = next.Add(s.delay[i])
		}
		wg.Go(func() {
			t := time.NewTimer(time.Until(next))
			defer t.Stop()
			for {
				select {
				case <-t.C:
				case <-ctx.Done():
					return
				}
				s.ran1(i)
				next = next.Add(s.period)
				t.Reset(time.Until(next))
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done
}

// sampler is what the checkers note: which checks have run, and in the
// window, how many runs began and how late.
type sampler struct {
	n      int
	period time.Duration
	start  time.Time       // with -spread: the moment initial delays count from
	delay  []time.Duration // initial delays by check, with -spread; nil without
	ran    []atomic.Bool
	warmed atomic.Int64
	warm   chan struct{} // closed once every check has run

	on   atomic.Bool
	mu   sync.Mutex
	runs int
	late []time.Duration
}

// ran1 is called by check i's checker, first thing.
func (s *sampler) ran1(i int) {
	now := time.Now()
	if !s.ran[i].Swap(true) && s.warmed.Add(1) == int64(s.n) {
		close(s.warm)
	}
	if !s.on.Load() {
		return
	}
	var late time.Duration
	if s.delay != nil {
		// Run k of check i was planned for start + delay + k×period; a run
		// is never early, and never late by half a period.
		since := now.Sub(s.start) - s.delay[i]
		k := (since + s.period/2) / s.period
		late = since - k*s.period
	}
	s.mu.Lock()
	s.runs++
	if s.delay != nil && len(s.late) < cap(s.late) {
		s.late = append(s.late, late)
	}
	s.mu.Unlock()
}

// collect starts the window, or ends it and sums it up.
func (s *sampler) collect(on bool) Line {
	s.on.Store(on)
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		s.runs, s.late = 0, s.late[:0]
		return Line{}
	}
	l := Line{Phase: "window", Runs: s.runs}
	if len(s.late) > 0 {
		l.LateP50ns = int64(harness.Percentile(s.late, 50))
		l.LateP99ns = int64(harness.Percentile(s.late, 99))
		l.LateMaxns = int64(s.late[len(s.late)-1]) // Percentile sorted them
	}
	return l
}

// fillHistories runs every check now until it keeps want results (a check
// keeps at most health.DefaultHistory), as it would after that many periods,
// and returns how many results the checks keep in all.
func fillHistories(m *health.Monitor, n, want int) (int, error) {
	ctx := context.Background()
	kept := 0
	for i := range n {
		name := fmt.Sprintf("check-%05d", i)
		st, ok := m.CheckState(name)
		if !ok {
			return 0, fmt.Errorf("check %s is gone", name)
		}
		for range want - len(st.History) {
			if _, err := m.RunNow(ctx, name); err != nil {
				return 0, err
			}
		}
		st, _ = m.CheckState(name)
		kept += len(st.History)
	}
	return kept, nil
}

// heap sets l's memory figures after a garbage collection: what stays live.
func heap(l *Line) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	l.HeapAlloc, l.HeapInuse, l.StackInuse, l.Sys = ms.HeapAlloc, ms.HeapInuse, ms.StackInuse, ms.Sys
	l.Goroutines = runtime.NumGoroutine()
}

// writeHeapProfile writes the heap profile to file, unless file is "".
func writeHeapProfile(file string) error {
	if file == "" {
		return nil
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// startClock is the system clock, remembering its first reading. Start reads
// the clock once before it starts any check (New and Add before Start do
// not), and every initial delay counts from that reading.
type startClock struct{ at atomic.Pointer[time.Time] }

func (c *startClock) Now() time.Time {
	t := time.Now()
	if c.at.Load() == nil {
		first := t // on the heap, but only this once
		c.at.CompareAndSwap(nil, &first)
	}
	return t
}

func (c *startClock) first() time.Time {
	if t := c.at.Load(); t != nil {
		return *t
	}
	return time.Time{}
}

func (*startClock) NewTimer(d time.Duration) health.Timer { return timer{time.NewTimer(d)} }

func (*startClock) WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, d)
}

type timer struct{ t *time.Timer }

func (t timer) C() <-chan time.Time { return t.t.C }
func (t timer) Stop() bool          { return t.t.Stop() }

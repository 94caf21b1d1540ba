package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/target"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// The wait's help on k8s:// targets, in the full build only.
var kubeWaitHelp, kubeWaitExample = func() (string, string) {
	if !target.KubeBuilt {
		return "", ""
	}
	return `
A k8s:// target is watched through the API server rather than tried again,
and judged as kubectl rollout status judges it, or with ?condition=TYPE as
kubectl wait --for=condition=TYPE does. One that can never be ready (a
rollout past its progress deadline, a failed job, a resource the API server
does not serve) ends the wait at once, exit 1. One that is not there yet is
waited for. A request that the API server refuses (RBAC) or that cannot
reach it is tried again until --timeout, and its error shown. -o json writes
what each k8s:// target found under "kubernetes": the objects, and the names
of the pods a selector matched.
`, `
  vitals wait k8s://deployment/gefyra-stowaway -n gefyra --timeout 2m
  vitals wait 'k8s://pods?selector=app%3Dstowaway&count=1' -n gefyra -o json
  vitals wait 'k8s://certificates.cert-manager.io/web?condition=Ready' -n shop`
}()

// The wait's example of a dependency target, in the full build only.
var depsWaitExample = func() string {
	if !target.Builds("postgres") {
		return ""
	}
	return `
  vitals wait "postgres://app:$PGPASSWORD@postgres:5432/app" "redis://:$REDIS_PASSWORD@redis:6379/0"`
}()

// firstDelay is the first pause between attempts; it doubles up to --interval,
// so a target that comes up quickly is seen quickly and one that takes
// minutes is not hammered.
const firstDelay = 100 * time.Millisecond

// MinInterval is the shortest --interval: a shorter pause between attempts
// is a busy loop of connections or processes, not a wait. (vitals run's
// shortest period is the same 10ms, for the same reason.)
const MinInterval = 10 * time.Millisecond

// redraw is how often the live line on a terminal is drawn again while
// nothing changes, for the time it shows.
const redraw = time.Second

func newWait(stdout, stderr io.Writer) *cobra.Command {
	var (
		o            target.Options
		timeout      time.Duration
		interval     time.Duration
		probeTimeout time.Duration
		verbose      bool
		output       *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "wait TARGET... [-- COMMAND [ARGS...]]",
		Short: "Wait until every target passes: exit 0 when all do, 1 on timeout",
		Long: `Wait until every target passes, trying again with a backoff that doubles up to
--interval. Exit 0 when all pass, 1 when --timeout passes first (saying which
targets still fail and why), 2 on bad usage. On a terminal one line shows the
progress; otherwise a line is printed whenever a target's state changes. -o
json and -o yaml write each target's last result on stdout at the end.
` + kubeWaitHelp + `
A kind's flag applies to the targets of that kind.

` + target.Help,
		Example: `  vitals wait tcp://postgres:5432 http://api:8080/readyz --timeout 2m` + kubeWaitExample + depsWaitExample + `
  vitals wait file:///config/peer1/peer1.conf --non-empty
  vitals wait metrics+http://localhost:8080/metrics --expr 'sum(increase(jobs_total[1m])) > 0' --timeout 5m
  vitals wait dns://minio.storage.svc.cluster.local tcp://minio.storage:9000
  vitals wait --interval 5s -- pg_isready -h postgres`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := positive(map[string]time.Duration{"timeout": timeout, "interval": interval, "probe-timeout": probeTimeout}); err != nil {
				return err
			}
			if err := underTimeout(cmd.Flags(), "probe-timeout", probeTimeout); err != nil {
				return err
			}
			if interval < MinInterval {
				return fmt.Errorf("--interval %v: must be at least %v, or the wait is a busy loop", interval, MinInterval)
			}
			targets, argv, err := splitArgs(cmd, args)
			if err != nil {
				return err
			}
			if len(targets) == 0 && argv == nil {
				return fmt.Errorf("wait needs at least one target")
			}
			probes, err := buildAll(cmd.Flags(), targets, argv, o, false)
			if err != nil {
				return err
			}
			// After the last attempt: a dependency's connection is kept from
			// one attempt to the next.
			defer closeAll(probes)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// A target that decides over a window (a metric condition's rate)
			// is tried no sooner than half of it after the last try, so that
			// its two scrapes span half the window, as vitals run's period
			// (no longer than half of it) has them, and not 100ms of it.
			spacing := make([]time.Duration, len(probes))
			for i, t := range targets {
				spacing[i] = target.Window(t, o) / 2
			}
			w := &waiter{probes: probes, spacing: spacing, timeout: timeout, interval: interval, probeTimeout: probeTimeout,
				progress: newProgress(stderr, verbose)}
			results, err := w.run(ctx)
			if output.document() {
				out := make([]result, len(probes))
				for i, p := range probes {
					out[i] = resultOf(p, results[i].Result)
					out[i].Kubernetes = results[i].found
				}
				if err := output.write(stdout, out); err != nil {
					return err
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	o = target.DefineFlags(f)
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "give up after this long")
	f.DurationVar(&interval, "interval", time.Second, "the longest pause between attempts")
	f.DurationVar(&probeTimeout, "probe-timeout", time.Second, "give up on one attempt at one target after this long")
	f.BoolVarP(&verbose, "verbose", "v", false, "print every attempt's failure, not only changes")
	output = addOutput(cmd, false)
	completeValues(cmd)
	return cmd
}

type waiter struct {
	probes []target.Target
	// spacing is, for each probe, the least pause between its attempts: 0,
	// or half its window for one that decides over a window.
	spacing                         []time.Duration
	timeout, interval, probeTimeout time.Duration
	progress                        *progress
}

// news is one target's latest result, for the loop that keeps the progress.
type news struct {
	i int
	finding
	late  bool // the end of the wait cut its attempt short
	final bool // the target can never pass: the wait is over
}

// finding is a target's result, and for a watched target what it found (a
// k8s:// target's objects), which -o json writes.
type finding struct {
	health.Result
	found any
}

// run waits for every target at once, each in a goroutine of its own that
// tries it with a backoff, or watches it, until it passes; the loop here
// hears their news and keeps the progress, until every target has passed,
// one can never pass, or the time is up.
func (w *waiter) run(ctx context.Context) ([]finding, error) {
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	// Ended also when a target can never pass: the others need no more trying.
	targets, stop := context.WithCancel(ctx)
	defer stop()
	updates := make(chan news)
	var wg sync.WaitGroup
	for i, p := range w.probes {
		if p.Watch != nil { // a target followed as it changes, rather than tried again
			wg.Go(func() { w.watch(targets, i, p, updates) })
		} else {
			wg.Go(func() { w.poll(targets, i, p, updates) })
		}
	}
	go func() { wg.Wait(); close(updates) }()

	results := make([]finding, len(w.probes))
	passed := make([]bool, len(w.probes))
	ready, final := 0, -1
	// On a terminal, the live line's time goes on between news too: a
	// watched target may have none for minutes.
	var tick <-chan time.Time
	if w.progress.terminal {
		t := time.NewTicker(redraw)
		defer t.Stop()
		tick = t.C
	}
loop:
	for {
		var n news
		select {
		case <-tick:
			if final < 0 && ctx.Err() == nil { // not when the wait is ending
				w.progress.status(time.Since(began), ready, len(w.probes), w.focus(results, passed))
			}
			continue
		case u, ok := <-updates:
			if !ok {
				break loop
			}
			n = u
		}
		p, r := w.probes[n.i], n.Result
		switch {
		case r.OK: // a pass counts, even in an attempt the end cut short
			passed[n.i], results[n.i] = true, n.finding
			ready++
			w.progress.passed(p.Prober, r, time.Since(began))
		case n.final:
			results[n.i].Result, final = r, n.i // what it found before stays
			stop()
			continue
		case n.late && !results[n.i].Time.IsZero():
			// An attempt the end cut short says less about why the target
			// fails than the last whole one.
			continue
		default:
			results[n.i] = n.finding
			w.progress.failing(p.Prober, r)
		}
		w.progress.status(time.Since(began), ready, len(w.probes), w.focus(results, passed))
	}
	switch {
	case ready == len(w.probes):
		w.progress.done(fmt.Sprintf("ready: %d of %d after %v", ready, ready, round(time.Since(began))))
		return results, nil
	case final >= 0:
		return results, w.notReady(fmt.Sprintf("%s failed after %v", w.probes[final], round(time.Since(began))), results, passed)
	case ctx.Err() == context.Canceled:
		return results, w.notReady(fmt.Sprintf("interrupted after %v", round(time.Since(began))), results, passed)
	}
	return results, w.notReady(fmt.Sprintf("timed out after %v", w.timeout), results, passed)
}

// focus is what the live line shows: the last target, in the order given,
// that has failed and not passed since. It is the same target whoever's
// news came last, so that the line does not flicker between targets.
func (w *waiter) focus(results []finding, passed []bool) string {
	line := ""
	for i, p := range w.probes {
		if !passed[i] && !results[i].Time.IsZero() {
			line = fmt.Sprintf("%s: %s", p, oneLine(results[i].Output))
		}
	}
	return line
}

// poll tries a target until it passes, pausing between attempts for a
// backoff that doubles up to --interval, and no less than its spacing.
func (w *waiter) poll(ctx context.Context, i int, p target.Target, updates chan<- news) {
	delay := min(firstDelay, w.interval)
	for {
		r := health.Run(ctx, p.Prober, w.probeTimeout)
		updates <- news{i: i, finding: finding{Result: r}, late: ctx.Err() != nil}
		if r.OK || ctx.Err() != nil {
			return
		}
		select {
		case <-time.After(max(delay, w.spacing[i])):
			delay = min(2*delay, w.interval)
		case <-ctx.Done():
			return
		}
	}
}

// watch follows a target that changes as it does, reporting every change.
func (w *waiter) watch(ctx context.Context, i int, p target.Target, updates chan<- news) {
	err := p.Watch(ctx, func(r health.Result, found any) {
		updates <- news{i: i, finding: finding{r, found}, late: ctx.Err() != nil}
	})
	if err != nil && ctx.Err() == nil {
		updates <- news{i: i, finding: finding{Result: health.Result{Time: time.Now(), Output: err.Error()}}, final: true}
	}
}

func (w *waiter) notReady(why string, results []finding, passed []bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "vitals wait: %s; not ready:", why)
	for i, p := range w.probes {
		switch {
		case passed[i]:
		case results[i].Time.IsZero():
			fmt.Fprintf(&b, "\n  %s: no answer yet", p)
		default:
			fmt.Fprintf(&b, "\n  %s: %s", p, oneLine(results[i].Output))
		}
	}
	w.progress.done("")
	return failed{b.String()}
}

func round(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }

// progress shows how the wait goes: one line rewritten in place on a
// terminal, or a plain line per change of a target's state elsewhere (logs
// of an init container should not get a line per attempt).
type progress struct {
	w        io.Writer
	terminal bool
	fd       int // of the terminal
	verbose  bool
	last     map[*probe.Prober]string // the last output printed per target
}

func newProgress(w io.Writer, verbose bool) *progress {
	p := &progress{w: w, verbose: verbose, last: map[*probe.Prober]string{}}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.terminal, p.fd = true, int(f.Fd())
	}
	return p
}

// width is how many columns the live line may take: one less than the
// terminal's, so that it never wraps (a wrapped line cannot be rewritten).
func (p *progress) width() int {
	if w, _, err := term.GetSize(p.fd); err == nil && w > 1 {
		return w - 1
	}
	return 79
}

func (p *progress) passed(pr *probe.Prober, r health.Result, after time.Duration) {
	p.clear()
	fmt.Fprintf(p.w, "ready: %s (%s) after %v\n", pr, describe(r), round(after))
}

func (p *progress) failing(pr *probe.Prober, r health.Result) {
	if p.terminal {
		if !p.verbose {
			return // the live line shows it
		}
		p.clear() // -v: every failure on a line of its own, above the live line
	}
	if p.verbose || p.last[pr] != r.Output {
		fmt.Fprintf(p.w, "waiting: %s: %s\n", pr, oneLine(r.Output))
		p.last[pr] = r.Output
	}
}

// status rewrites the live line, on a terminal: the count, and a failing
// target's output.
func (p *progress) status(waited time.Duration, ready, all int, failing string) {
	if !p.terminal || ready == all {
		return
	}
	line := fmt.Sprintf("waiting %v: %d of %d ready", waited.Round(time.Second), ready, all)
	if failing != "" { // nothing heard yet
		line += "; " + failing
	}
	if r, w := []rune(line), p.width(); len(r) > w {
		line = string(r[:w-1]) + "…"
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
}

func (p *progress) clear() {
	if p.terminal {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

func (p *progress) done(msg string) {
	p.clear()
	if msg != "" {
		fmt.Fprintln(p.w, msg)
	}
}

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
)

// firstDelay is the first pause between attempts; it doubles up to --interval,
// so a target that comes up quickly is seen quickly and one that takes
// minutes is not hammered.
const firstDelay = 100 * time.Millisecond

func newWait(stdout, stderr io.Writer) *cobra.Command {
	var (
		o            target.Options
		timeout      time.Duration
		interval     time.Duration
		probeTimeout time.Duration
		verbose      bool
		output       string
	)
	cmd := &cobra.Command{
		Use:   "wait TARGET... [-- COMMAND [ARGS...]]",
		Short: "Wait until every target passes: exit 0 when all do, 1 on timeout",
		Long: `Wait until every target passes, trying again with a backoff that doubles up to
--interval. Exit 0 when all pass, 1 when --timeout passes first (saying which
targets still fail and why), 2 on bad usage. On a terminal one line shows the
progress; otherwise a line is printed whenever a target's state changes.

A kind's flag applies to the targets of that kind.

` + targetHelp,
		Example: `  vitals wait tcp://postgres:5432 http://api:8080/readyz --timeout 2m
  vitals wait file:///config/peer1/peer1.conf --non-empty
  vitals wait dns://minio.storage.svc.cluster.local tcp://minio.storage:9000
  vitals wait --interval 5s -- pg_isready -h postgres`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := oneOf("output", output, "text", "json"); err != nil {
				return err
			}
			if err := positive(map[string]time.Duration{"timeout": timeout, "interval": interval, "probe-timeout": probeTimeout}); err != nil {
				return err
			}
			o.Set = cmd.Flags().Changed
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
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			w := &waiter{probes: probes, timeout: timeout, interval: interval, probeTimeout: probeTimeout,
				progress: newProgress(stderr, verbose)}
			results, err := w.run(ctx)
			if output == "json" {
				out := make([]result, len(probes))
				for i, p := range probes {
					out[i] = resultOf(p, results[i])
				}
				if err := writeJSON(stdout, out); err != nil {
					return err
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	target.DefineFlags(f, &o)
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "give up after this long")
	f.DurationVar(&interval, "interval", time.Second, "the longest pause between attempts")
	f.DurationVar(&probeTimeout, "probe-timeout", time.Second, "give up on one attempt at one target after this long")
	f.BoolVarP(&verbose, "verbose", "v", false, "print every attempt's failure, not only changes")
	f.StringVarP(&output, "output", "o", "text", "text, or json for the last results as JSON on stdout")
	completeValues(cmd)
	return cmd
}

type waiter struct {
	probes                          []target.Probe
	timeout, interval, probeTimeout time.Duration
	progress                        *progress
}

// run tries every target not yet passed, all at once, then pauses, until all
// have passed or the time is up. A target that passed once stays passed.
func (w *waiter) run(ctx context.Context) ([]health.Result, error) {
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	results := make([]health.Result, len(w.probes))
	passed := make([]bool, len(w.probes))
	delay := min(firstDelay, w.interval)
	attempt := make([]health.Result, len(w.probes))
	for {
		var wg sync.WaitGroup
		for i, p := range w.probes {
			if !passed[i] {
				wg.Go(func() { attempt[i] = health.Run(ctx, p, w.probeTimeout) })
			}
		}
		wg.Wait()
		waiting := 0
		for i, p := range w.probes {
			switch {
			case passed[i]:
				continue
			case attempt[i].OK: // a pass counts, even in an attempt the end cut short
				passed[i], results[i] = true, attempt[i]
				w.progress.passed(p, results[i], time.Since(began))
				continue
			case ctx.Err() == nil || results[i].Time.IsZero():
				// An attempt the end cut short says less about why the target
				// fails than the last whole one.
				results[i] = attempt[i]
			}
			waiting++
			w.progress.failing(p, results[i])
		}
		w.progress.status(time.Since(began), len(w.probes)-waiting, len(w.probes))
		if waiting == 0 {
			w.progress.done(fmt.Sprintf("ready: %d of %d after %v", len(w.probes), len(w.probes), round(time.Since(began))))
			return results, nil
		}
		select {
		case <-time.After(delay):
			delay = min(2*delay, w.interval)
		case <-ctx.Done():
			return results, w.notReady(ctx, results, passed, time.Since(began))
		}
	}
}

func (w *waiter) notReady(ctx context.Context, results []health.Result, passed []bool, waited time.Duration) error {
	why := fmt.Sprintf("timed out after %v", w.timeout)
	if ctx.Err() == context.Canceled {
		why = fmt.Sprintf("interrupted after %v", round(waited))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "vitals wait: %s; not ready:", why)
	for i, p := range w.probes {
		if !passed[i] {
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
	last     map[target.Probe]string // the last output printed per target
	line     string                  // the live line's failing target, on a terminal
}

func newProgress(w io.Writer, verbose bool) *progress {
	p := &progress{w: w, verbose: verbose, last: map[target.Probe]string{}}
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

func (p *progress) passed(pr target.Probe, r health.Result, after time.Duration) {
	p.clear()
	fmt.Fprintf(p.w, "ready: %s (%s) after %v\n", pr, describe(r), round(after))
}

func (p *progress) failing(pr target.Probe, r health.Result) {
	if p.terminal {
		p.line = fmt.Sprintf("%s: %s", pr, oneLine(r.Output))
		if !p.verbose {
			return
		}
		p.clear() // -v: every failure on a line of its own, above the live line
	}
	if p.verbose || p.last[pr] != r.Output {
		fmt.Fprintf(p.w, "waiting: %s: %s\n", pr, oneLine(r.Output))
		p.last[pr] = r.Output
	}
}

func (p *progress) status(waited time.Duration, ready, all int) {
	if !p.terminal || ready == all {
		return
	}
	line := fmt.Sprintf("waiting %v: %d of %d ready; %s", waited.Round(time.Second), ready, all, p.line)
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

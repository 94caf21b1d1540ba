// Package logwatch is how the agent reads what its workload prints: Streams
// passes the workload's stdout and stderr through to vitals's own, line by
// line and unchanged, and shows every line to the log checks of its stream.
// A log check passes once the workload printed a line it waits for
// ("Listening on"), or fails while a line it dreads is recent ("OIDC provider
// setup failed").
//
//	started, _ := logwatch.NewCheck("started", logwatch.Spec{Pattern: "Listening on"}, nil)
//	streams := logwatch.New([]*logwatch.Check{started}, func(c *logwatch.Check) { /* run c now */ })
//	go streams.Copy(os.Stdout, stdoutPipe, logwatch.Stdout)
//	go streams.Copy(os.Stderr, stderrPipe, logwatch.Stderr)
//
// A *Check is a health.Checker like any other, added to the agent's Monitor
// under its name; Streams says when its answer may have changed, so that the
// agent runs it at once instead of a period later. The package sits under
// the agent, beside package supervise, and imports only package health.
package logwatch

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// The streams of a workload, as Spec.Stream and Streams.Copy name them.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// DefaultWindow is how long a line matching FailPattern keeps its check
// failing when Spec.Window is zero. The line fails the check when it is
// printed (Streams wakes it, and its failure threshold is 1 unless the file
// gives more); a minute keeps it failing through the next runs of a check
// given a threshold of 3 at the kubelet's period of 10s, and still lets a
// one-off error clear on its own soon after.
const DefaultWindow = time.Minute

// Spec says what a log check looks for. Give Pattern, FailPattern or both;
// with both, the check passes only when both conditions hold.
//
// Patterns are regular expressions in Go's RE2 syntax, matched anywhere in
// each line (unless anchored with ^ or $) against the line without its line
// ending ("\n" or "\r\n"), as the workload printed it: colour escapes and
// all. A line longer than MaxLine is matched in pieces of MaxLine bytes.
//
// A pattern that holds plain text ("Listening on", `port \d+ open`,
// "(?i)error") is cheap under a flood: lines without that text are skipped
// at memory speed (ignoring case, several times slower), and the regular
// expression runs on the others only. One without (error|fatal, [0-9]+) runs
// on every line, at tens of MB/s: write error|fatal as two checks if that
// matters.
type Spec struct {
	// Pattern is a line the workload prints once it is up: the check fails
	// until a line matching it has been printed since the workload last
	// started, then passes. Optional.
	Pattern string
	// FailPattern is a line that says something is wrong: the check fails
	// while the latest line matching it is younger than Window. Optional.
	FailPattern string
	// Window is how long a line matching FailPattern fails the check. Only
	// with FailPattern; default DefaultWindow (1m).
	Window time.Duration
	// Stream is the stream read: Stdout, Stderr, or "" for both (default).
	Stream string
}

// FieldError is what is wrong with one field of a Spec. Field is the
// field's name as vitals.yaml writes it: "pattern", "fail-pattern",
// "window" or "stream".
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + " " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// compile validates s, fills in its defaults, and compiles its patterns: a
// nil matcher for a pattern not given. Every problem is in the error, each a
// *FieldError but for the lack of any pattern.
func (s Spec) compile() (Spec, *matcher, *matcher, error) {
	var errs []error
	pattern := func(field, expr string) *matcher {
		if expr == "" {
			return nil
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			errs = append(errs, &FieldError{field, fmt.Errorf("%q: %w", expr, err)})
			return nil
		}
		return newMatcher(re)
	}
	p, f := pattern("pattern", s.Pattern), pattern("fail-pattern", s.FailPattern)
	if s.Pattern == "" && s.FailPattern == "" {
		errs = append(errs, errors.New("give pattern, fail-pattern or both"))
	}
	switch {
	case s.Window < 0:
		errs = append(errs, &FieldError{"window", fmt.Errorf("%v is negative", s.Window)})
	case s.Window > 0 && s.FailPattern == "":
		errs = append(errs, &FieldError{"window", errors.New("applies only with fail-pattern")})
	case s.Window == 0 && s.FailPattern != "":
		s.Window = DefaultWindow
	}
	if s.Stream != "" && s.Stream != Stdout && s.Stream != Stderr {
		errs = append(errs, &FieldError{"stream", fmt.Errorf("%q is not %s or %s (leave it out for both)", s.Stream, Stdout, Stderr)})
	}
	return s, p, f, errors.Join(errs...)
}

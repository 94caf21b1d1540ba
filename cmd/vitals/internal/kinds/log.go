package kinds

import (
	"errors"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/logwatch"
	"github.com/vitals-dev/vitals/health"
)

// Log watches the workload's output for a line. Its spec is a
// logwatch.Spec with its defaults filled in.
var Log = define(Kind{
	Name:          "log",
	Summary:       "The workload's output: passes once a line matches pattern, fails for window after a line matches fail-pattern.",
	Example:       "{pattern: Listening on}",
	ComponentType: health.ComponentTypeComponent, // the workload's own output
	// A fail-pattern line is an event: the check runs at once and fails
	// then (the agent's wake-ups), not at the third run after it. A check
	// with a pattern waits for its line, failing until it comes: the
	// kubelet's threshold, as a startupProbe's, not a failure at its first
	// run.
	FailureThreshold: health.EventFailureThreshold,
	EventsWhen:       "with fail-pattern and no pattern",
	// One of pattern and fail-pattern; window with fail-pattern
	// (logwatch.NewCheck).
	Rules: config.Schema{"anyOf": []config.Schema{{"required": []string{"pattern"}}, {"required": []string{"fail-pattern"}}},
		"dependentRequired": map[string][]string{"window": {"fail-pattern"}}},
	CLI: &CLI{Why: "a log check reads the output of the workload that vitals run supervises, as it comes, " +
		"and vitals probe and vitals wait have no workload: give it as a log: check in vitals.yaml"},
}, block[logwatch.Spec]{
	fields: func(s *logwatch.Spec) []config.Field {
		return []config.Field{
			{Key: "pattern", Value: config.String(&s.Pattern),
				Doc: "A regular expression: the check fails until a line matches (pending for its first failure-threshold runs), and passes from then on."},
			{Key: "fail-pattern", Value: config.String(&s.FailPattern),
				Doc: "A regular expression: a matching line fails the check for window. One of pattern and fail-pattern, or both."},
			{Key: "window", Value: config.Duration(&s.Window), Default: logwatch.DefaultWindow.String(),
				Doc: "How long a fail-pattern line fails the check; only with fail-pattern."},
			{Key: "stream", Value: config.String(&s.Stream),
				Doc: "The output read, stdout or stderr; by default both."},
		}
	},
	events: func(s logwatch.Spec) bool { return s.Pattern == "" },
	// What is wrong with a pattern is said at the pattern: the check is
	// built as it will be, and its field errors placed.
	check: func(d *config.Decoder, n ast.Node, path string, s *logwatch.Spec, given config.Given) {
		if given["window"] != nil && s.Window == 0 {
			if s.FailPattern == "" {
				d.Errorf(given["window"], path+".window", "applies only with fail-pattern")
			} else {
				d.Errorf(given["window"], path+".window", "more than 0, or left out for the default, %v", logwatch.DefaultWindow)
			}
			return
		}
		check, err := logwatch.NewCheck(checkName(path, "log"), *s, nil)
		if err != nil {
			for _, err := range unjoin(err) {
				var fe *logwatch.FieldError
				if errors.As(err, &fe) && given[fe.Field] != nil {
					d.Errorf(given[fe.Field], path+"."+fe.Field, "%v", fe.Err)
				} else {
					d.Errorf(n, path, "%v", err)
				}
			}
			return
		}
		*s = check.Spec()
	},
	build: func(name string, s logwatch.Spec, env Env) (health.Checker, error) {
		if env.Output == nil {
			return nil, ErrNoWorkload
		}
		check, err := logwatch.NewCheck(name, s, nil)
		if err != nil {
			return nil, err
		}
		env.Output(check)
		return check, nil
	},
})

// ErrNoWorkload is a log check's build with no workload to read (no
// Env.Output): the agent says it at the check, where the file has it, when
// neither the file nor the command line gives a workload.
var ErrNoWorkload = errors.New("a log check reads the workload's output: give service: in the file, or the command after --")

// unjoin returns the errors that errors.Join joined into err, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

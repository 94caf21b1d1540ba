package config

import (
	"errors"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/logwatch"
	"github.com/vitals-dev/vitals/health"
)

// logKind reads a log check: {pattern, fail-pattern, window, stream}. It
// builds the check while it reads the block, so that what is wrong with a
// pattern is said at the pattern. Its spec is a logwatch.Spec with its
// defaults filled in.
func logKind(d *decoder, n ast.Node, path string) (any, func() (health.Checker, error)) {
	var s logwatch.Spec
	at := map[string]ast.Node{}
	noted := func(name string, f field) field {
		return func(d *decoder, n ast.Node, path string) {
			at[name] = n
			f(d, n, path)
		}
	}
	mark := len(d.errors)
	if !d.fields(n, path, map[string]field{
		"pattern": noted("pattern", str(&s.Pattern)), "fail-pattern": noted("fail-pattern", str(&s.FailPattern)),
		"window": noted("window", duration(&s.Window)), "stream": noted("stream", str(&s.Stream)),
	}) || len(d.errors) > mark {
		return nil, nil
	}
	if at["window"] != nil && s.Window == 0 {
		if s.FailPattern == "" {
			d.errorf(at["window"], path+".window", "applies only with fail-pattern")
		} else {
			d.errorf(at["window"], path+".window", "more than 0, or left out for the default, %v", logwatch.DefaultWindow)
		}
		return nil, nil
	}
	name := strings.TrimSuffix(strings.TrimPrefix(path, "checks."), ".log")
	check, err := logwatch.NewCheck(name, s, nil)
	if err != nil {
		for _, err := range unjoin(err) {
			var fe *logwatch.FieldError
			if errors.As(err, &fe) && at[fe.Field] != nil {
				d.errorf(at[fe.Field], path+"."+fe.Field, "%v", fe.Err)
			} else {
				d.errorf(n, path, "%v", err)
			}
		}
		return nil, nil
	}
	return check.Spec(), func() (health.Checker, error) { return check, nil }
}

// unjoin returns the errors that errors.Join joined into err, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// Package probe has the check kinds that need nothing but the standard
// library: http, tcp, exec, file, dns and tls. Each kind is a Spec struct and
// a constructor that validates it (so a bad spec fails when it is built, not
// when it runs) and returns a *Prober: a health.Checker that also reports
// what it observed (a latency, a status code, the days a certificate has
// left), with failure output that says what was wrong and with what input.
// An output leaves out what the probe's String already says (the path, the
// name, the address, the command), as it is shown beside it: the CLI prints
// "TARGET: OUTPUT", and a Monitor names the check.
//
// Where the kubelet's probes have an answer (HTTP status range, redirects,
// body cap, exec output cap and timeout), the kinds give the same one. Every
// kind honours its context's deadline in every phase: dial, TLS handshake,
// write, read, DNS, process.
//
//	p, err := probe.HTTP(probe.HTTPSpec{URL: "http://localhost:8080/healthz"})
//	m.Add(health.Check{Name: "ui", Level: health.Ready, Checker: p})
//
// Package probe sits under package health and beside it in the root module,
// which has no third-party dependency; the dependency kinds (postgres, redis,
// amqp, nats, grpc) live in the modules that can afford their clients.
package probe

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// Prober is one check of one kind, ready to run as often as needed. Its
// Measure runs it once; Check does too, keeping only the error. Safe for
// concurrent use.
type Prober struct {
	kind    string
	target  string
	measure func(ctx context.Context) (health.Observation, error)
	close   func() error // nil: nothing kept between runs
}

// New makes a Prober of a kind that lives outside this package: the
// dependency kinds (postgres, redis, amqp, nats) and grpc, so that every
// check kind has the one shape whoever runs it (a Monitor, vitals probe,
// vitals wait). kind is its Kind, target its String, and
// measure one run. close, when not nil, releases what the kind keeps
// between runs, such as a dependency's connection; Close calls it.
func New(kind, target string, measure func(ctx context.Context) (health.Observation, error), close func() error) *Prober {
	return &Prober{kind: kind, target: target, measure: measure, close: close}
}

var _ health.Measurer = (*Prober)(nil)

// Check runs the probe once and reports nil or what is wrong.
func (p *Prober) Check(ctx context.Context) error {
	_, err := p.measure(ctx)
	return err
}

// Measure runs the probe once and reports what it observed and what is wrong.
func (p *Prober) Measure(ctx context.Context) (health.Observation, error) {
	return p.measure(ctx)
}

// Kind is the probe's kind: "http", "tcp", "exec", "file", "dns" or "tls"
// for this package's, or the kind New was given.
func (p *Prober) Kind() string { return p.kind }

// Close releases what the probe keeps between runs (a dependency's
// connection); a run after Close starts afresh. Nil for a kind that keeps
// nothing, as this package's kinds, each of which connects anew every run.
func (p *Prober) Close() error {
	if p.close == nil {
		return nil
	}
	return p.close()
}

// String says what the probe checks, as in `GET http://localhost:8080/`.
func (p *Prober) String() string { return p.target }

// SpecError is why a kind's spec cannot be built, as every kind's
// constructor returns it (this package's, the dependency kinds' and grpc's):
// "KIND probe: WHAT". Err is what is wrong without the kind, for whoever
// says the kind already, such as a configuration error at checks.NAME.KIND.
type SpecError struct {
	Kind string // such as http
	Err  error
}

func (e *SpecError) Error() string { return e.Kind + " probe: " + e.Err.Error() }

// Unwrap is Err, so that errors.Is and errors.As find its cause.
func (e *SpecError) Unwrap() error { return e.Err }

// Invalid is the *SpecError of a kind's spec that cannot be built. Its
// format is fmt.Errorf's, so that %w keeps the cause for errors.Is and
// errors.As. The kinds outside this package word their errors with it too.
func Invalid(kind, format string, args ...any) error {
	return &SpecError{Kind: kind, Err: fmt.Errorf(format, args...)}
}

// WithoutKind is what is wrong with a spec, without "KIND probe: " when err
// is a *SpecError (whoever says it names the kind already); err's text
// otherwise.
func WithoutKind(err error) string {
	var se *SpecError
	if errors.As(err, &se) {
		return se.Err.Error()
	}
	return err.Error()
}

// latency is the observation of a probe that times a connection or a
// request: milliseconds to the microsecond, finer than any network answers.
func latency(d time.Duration) health.Observation {
	return health.Observation{Value: float64(d.Microseconds()) / 1000, Unit: "ms"}
}

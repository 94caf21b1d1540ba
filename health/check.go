package health

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// Level says which probe endpoint a check answers to. The names follow
// Kubernetes: startupProbe, livenessProbe, readinessProbe.
type Level int

const (
	// Startup checks gate the rest: live and ready checks do not run until every
	// startup check has passed, and startup checks stop once passed (the level
	// latches, as the kubelet's startup result does).
	Startup Level = iota + 1
	// Live checks fail /livez: the process is wedged and should be restarted.
	// Keep them cheap and free of dependencies; a pending live check does not
	// fail liveness.
	Live
	// Ready checks fail /readyz: the process cannot serve now and should get no
	// traffic. A pending ready check fails readiness.
	Ready
)

var levelNames = [...]string{Startup: "startup", Live: "live", Ready: "ready"}

func (l Level) String() string {
	if l.valid() {
		return levelNames[l]
	}
	return fmt.Sprintf("level(%d)", int(l))
}

func (l Level) valid() bool { return l >= Startup && l <= Ready }

// MarshalText writes the level's name, as String does, so that an event with
// a bad level still encodes.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads a level's name; "alive" is accepted for live (Pebble's word).
func (l *Level) UnmarshalText(b []byte) error {
	v, err := ParseLevel(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// ParseLevel reads "startup", "live" (or Pebble's "alive") and "ready".
func ParseLevel(s string) (Level, error) {
	switch s {
	case "startup":
		return Startup, nil
	case "live", "alive":
		return Live, nil
	case "ready":
		return Ready, nil
	}
	return 0, fmt.Errorf("unknown level %q (want startup, live or ready)", s)
}

// Checker is what a check runs. Check returns nil when the checked thing is
// healthy and an error saying what is wrong otherwise. It must honour ctx: the
// context ends at the check's timeout. A checker that ignores it is still
// recorded as failed at the timeout, and no new run of the check starts until it
// returns.
type Checker interface {
	Check(ctx context.Context) error
}

// CheckerFunc adapts a function to Checker.
type CheckerFunc func(ctx context.Context) error

// Check calls f(ctx).
func (f CheckerFunc) Check(ctx context.Context) error { return f(ctx) }

// Measurer is implemented by checkers that observe a value (a latency, a status
// code, the days a certificate has left). When a check's Checker implements it,
// the Monitor calls Measure instead of Check and keeps the observation with the
// result; the IETF JSON format shows it as observedValue and observedUnit.
type Measurer interface {
	Measure(ctx context.Context) (Observation, error)
}

// Observation is what a Measurer saw in one run. Every field is optional,
// but a Value needs its Unit: a number is read by its unit (12 ms or 12 s),
// and the IETF JSON format leaves out a value given without one.
type Observation struct {
	Value   any    // JSON-encodable, such as 42, 0.013 or "200"
	Unit    string // such as "ms", "s", "days" or "percent", or Dimensionless; required with Value
	Message string // the result's output when the run passed
}

// Dimensionless is the unit of an observed number that has none, such as
// a count of items or a ratio: "1", as UCUM and OpenTelemetry write it. A
// value is served only with its unit (12 ms, or 12 s?), and this one says
// that the number is all there is to read.
const Dimensionless = "1"

// ErrUndecided is what the error of a run that can decide nothing yet is
// (errors.Is), such as a rate over a window that holds one sample so far:
// Undecided makes one. The Monitor keeps such a run as a result
// (Result.Undecided) that moves no threshold: a pending check stays
// pending, a passing or failing one keeps its status, and the consecutive
// counts go on as they were. Its output says what the check waits for.
var ErrUndecided = errors.New("undecided")

// Undecided is the error of a run that can decide nothing yet, which is
// ErrUndecided (errors.Is); its text is reason, which says why and what the
// check waits for ("increase(x[2m]) needs two scrapes in its window; this is
// the first"). A check stays pending while its runs say so.
func Undecided(reason string) error { return undecided(reason) }

type undecided string

func (u undecided) Error() string { return string(u) }

// Is makes an undecided run's error ErrUndecided.
func (undecided) Is(target error) bool { return target == ErrUndecided }

// Check is one named, scheduled check. The zero value of every timing field
// means the Monitor's default: the kubelet's (period 10s, timeout 1s, no
// initial delay, thresholds 1 and 3) unless changed with WithDefaults, and no
// StableFor.
type Check struct {
	// Name identifies the check in endpoints, events and exclusions:
	// [a-z0-9]([-a-z0-9_.]*[a-z0-9])?, at most 63 characters. Required.
	Name string
	// Level is the endpoint the check answers to. Required.
	Level Level
	// Checker is run every period. Required.
	Checker Checker

	// Period between the starts of two runs. Default 10s (the kubelet's).
	Period time.Duration
	// Timeout of one run; the run's context ends then. Default 1s (the
	// kubelet's), or Period when that is shorter. Must not exceed Period, so
	// that runs cannot pile up.
	Timeout time.Duration
	// InitialDelay before the first run, from Start (or from Add, for a check
	// added later). Default 0: the first run happens at once, not a period
	// later.
	InitialDelay time.Duration
	// SuccessThreshold is how many consecutive passing runs make a pending or
	// failed check pass. Default 1.
	SuccessThreshold int
	// FailureThreshold is how many consecutive failing runs make a check fail.
	// Default 3, as in Kubernetes and Pebble: one lost packet should not flip a
	// probe.
	FailureThreshold int
	// StableFor is how long a check must have passed, with no failed run,
	// before it counts as passing: Kubernetes's minReadySeconds, for one
	// check. Once its runs meet SuccessThreshold it stays pending (or
	// failed) for StableFor more, and passes at that moment unless a run
	// fails first; a failed run starts the wait over, from the next runs
	// that meet SuccessThreshold. A passing check that fails below
	// FailureThreshold warns and passes again as any check does, with no
	// new wait. The wait starts over with the check (Reset). Default 0: a
	// check passes the moment its runs meet SuccessThreshold.
	StableFor time.Duration

	// ComponentType is the check's componentType in the IETF JSON format,
	// which says what the checked thing is: "component" (a part of the
	// service itself), "datastore" (a database or a cache it keeps its data
	// in), "system" (another system it depends on), or an absolute URI for a
	// type of one's own. Optional: "" leaves it out, except for heartbeats
	// and watchdogs, which are always "component" (the program's own loops).
	ComponentType string
	// Kind says what the check does, for people: "http", "exec", "postgres".
	// Optional; Add makes it "checker". Heartbeats and watchdogs are
	// "heartbeat" and "watchdog".
	Kind string

	// Disabled adds the check stopped, as StopCheck leaves a check: it
	// neither runs nor counts for its level until StartCheck, and from then
	// on it is pending and counts as any check (Pebble's startup: disabled,
	// for a check that is there to be started by hand). Add emits
	// check-added for it, as for any check, and no check-stopped. Default
	// false: the check runs from Start, or from Add once started.
	Disabled bool
}

// Defaults are the timing values a check gets for its zero fields.
type Defaults struct {
	Period           time.Duration // 10s
	Timeout          time.Duration // 1s
	InitialDelay     time.Duration // 0
	SuccessThreshold int           // 1
	FailureThreshold int           // 3
}

// kubeletDefaults are the kubelet's probe defaults, which a Monitor uses unless
// told otherwise with WithDefaults.
var kubeletDefaults = Defaults{
	Period:           10 * time.Second,
	Timeout:          time.Second,
	SuccessThreshold: 1,
	FailureThreshold: 3,
}

// EventFailureThreshold is the failure threshold of heartbeats and watchdogs,
// and the one to give a check whose failure is an event at a known moment (a
// line in a log, a deadline passing) rather than a state polled every
// period: 1, so that it fails at that moment. Such a failure is not the lost
// packet that the kubelet's 3 forgives, and two more periods would only
// delay it.
const EventFailureThreshold = 1

// Errors that Add, Heartbeat, Watchdog and BeginID wrap; test for them with errors.Is.
var (
	ErrInvalidCheck  = errors.New("invalid check")
	ErrDuplicateName = errors.New("duplicate check name")
	ErrNoSuchCheck   = errors.New("no such check")
	// ErrStartupLatched: a startup check cannot be added once the startup
	// level has passed, since it latches until the process restarts.
	ErrStartupLatched = errors.New("startup level has already passed")
	// ErrStopped: the context given to Start has ended, so nothing added would
	// ever run.
	ErrStopped = errors.New("monitor has stopped")
	// ErrTooManyUnits: Watchdog.BeginID found MaxUnitIDs units of work
	// begun by id running on the watchdog.
	ErrTooManyUnits = errors.New("too many units of work")
)

const maxNameLength = 63 // the length of a Kubernetes label value

// ValidName reports whether s can name a check: whether it matches [a-z0-9]([-a-z0-9_.]*[a-z0-9])? within
// maxNameLength: names appear in URL paths, query strings and event fields, so
// they must need no escaping anywhere.
func ValidName(s string) bool {
	if s == "" || len(s) > maxNameLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		inner := c == '-' || c == '_' || c == '.'
		if !alnum && !(inner && i > 0 && i < len(s)-1) {
			return false
		}
	}
	return true
}

// The component types that the IETF draft defines, for Check.ComponentType.
const (
	ComponentTypeComponent = "component" // a part of the service itself
	ComponentTypeDatastore = "datastore" // a database or a cache the service keeps its data in
	ComponentTypeSystem    = "system"    // another system the service depends on
)

// validComponentType reports whether s can be a Check's ComponentType: "",
// one of the draft's three types, or an absolute URI (a scheme, then no
// space or control character), the draft's form of a type of one's own,
// such as https://schema.org/Database. Other words are refused, so that a
// misspelt type is an error, not a type no reader knows.
func validComponentType(s string) bool {
	switch s {
	case "", ComponentTypeComponent, ComponentTypeDatastore, ComponentTypeSystem:
		return true
	}
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.IsAbs() && u.Opaque+u.Host+u.Path != ""
}

// CheckError is what is wrong with a Check, as Validate and Add find it: it
// names the field, so that a caller that read the check from a file can say
// where the value is, without reading the message. It wraps ErrInvalidCheck.
type CheckError struct {
	Name string // the check's name, as given
	// Field is the Check field that is wrong: "Name", "Level", "Period",
	// "Timeout", "InitialDelay", "SuccessThreshold", "FailureThreshold",
	// "StableFor", "ComponentType" or "Checker".
	Field string
	Msg   string // what is wrong, such as "timeout 2s is longer than period 1s"
}

func (e *CheckError) Error() string {
	return fmt.Sprintf("check %q: %s: %v", e.Name, e.Msg, ErrInvalidCheck)
}

func (e *CheckError) Unwrap() error { return ErrInvalidCheck }

// Validate checks c as Add does, but for its Checker (a configuration
// validates its checks before it builds any), and returns it with its zero
// timing fields set to the kubelet's defaults (period 10s, timeout 1s or the
// period when shorter, no initial delay, thresholds 1 and 3), as a Monitor
// without WithDefaults runs it. The error is a *CheckError.
func (c Check) Validate() (Check, error) { return c.withDefaults(kubeletDefaults) }

// withDefaults validates c, but for its Checker, and fills its zero timing
// fields from d.
func (c Check) withDefaults(d Defaults) (Check, error) {
	invalid := func(field, format string, args ...any) (Check, error) {
		return Check{}, &CheckError{Name: c.Name, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case !ValidName(c.Name):
		return invalid("Name", "name must match [a-z0-9]([-a-z0-9_.]*[a-z0-9])? and be at most %d characters", maxNameLength)
	case c.Name == shutdownLine || c.Name == monitorLine:
		return invalid("Name", "name %q is reserved for a line of the probe endpoints", c.Name)
	case !c.Level.valid():
		return invalid("Level", "level %v is not Startup, Live or Ready", c.Level)
	case c.Period < 0:
		return invalid("Period", "period %v is negative", c.Period)
	case c.Timeout < 0:
		return invalid("Timeout", "timeout %v is negative", c.Timeout)
	case c.InitialDelay < 0:
		return invalid("InitialDelay", "initial delay %v is negative", c.InitialDelay)
	case c.SuccessThreshold < 0:
		return invalid("SuccessThreshold", "success threshold %d is below 1", c.SuccessThreshold)
	case c.FailureThreshold < 0:
		return invalid("FailureThreshold", "failure threshold %d is below 1", c.FailureThreshold)
	case c.StableFor < 0:
		return invalid("StableFor", "time to be stable %v is negative", c.StableFor)
	case !validComponentType(c.ComponentType):
		return invalid("ComponentType", "component type %q is not component, datastore, system or an absolute URI", c.ComponentType)
	}
	timeoutSet := c.Timeout != 0
	if c.Period == 0 {
		c.Period = d.Period
	}
	if c.Timeout == 0 {
		c.Timeout = min(d.Timeout, c.Period)
	}
	if c.InitialDelay == 0 {
		c.InitialDelay = d.InitialDelay
	}
	if c.SuccessThreshold == 0 {
		c.SuccessThreshold = d.SuccessThreshold
	}
	if c.FailureThreshold == 0 {
		c.FailureThreshold = d.FailureThreshold
	}
	if timeoutSet && c.Timeout > c.Period {
		return invalid("Timeout", "timeout %v is longer than period %v", c.Timeout, c.Period)
	}
	return c, nil
}

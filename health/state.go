package health

import "fmt"

// Status is what a check's recent results add up to.
type Status int

const (
	// Pending: no decision yet. A check is pending until its first
	// SuccessThreshold consecutive passes or FailureThreshold consecutive
	// failures. Pending fails readiness and startup, not liveness.
	Pending Status = iota
	// Pass: the last SuccessThreshold runs passed, and none failed since.
	Pass
	// Warn: the check passes, but its latest runs failed, fewer than
	// FailureThreshold of them. It still counts as passing.
	Warn
	// Fail: the last FailureThreshold runs failed, and the check has not passed
	// SuccessThreshold times in a row since.
	Fail
)

var statusNames = [...]string{Pending: "pending", Pass: "pass", Warn: "warn", Fail: "fail"}

func (s Status) String() string {
	if s >= Pending && s <= Fail {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// MarshalText writes the status's name.
func (s Status) MarshalText() ([]byte, error) {
	if s < Pending || s > Fail {
		return nil, fmt.Errorf("invalid status %d", int(s))
	}
	return []byte(statusNames[s]), nil
}

// UnmarshalText reads a status's name.
func (s *Status) UnmarshalText(b []byte) error {
	for i, name := range statusNames {
		if string(b) == name {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("unknown status %q (want pending, pass, warn or fail)", b)
}

// passing reports whether the status counts as healthy for a level that does
// not tolerate pending (readiness, startup).
func (s Status) passing() bool { return s == Pass || s == Warn }

// counter is the whole state machine of one check: its status and the length
// of the current run of equal results, as the kubelet's worker keeps them.
type counter struct {
	status    Status
	successes int // consecutive passing runs, up to now
	failures  int // consecutive failing runs, up to now
}

// thresholds are a check's SuccessThreshold and FailureThreshold.
type thresholds struct{ success, failure int }

// next is the state machine: the state after one more result. It is a pure
// function so that every path through it is table-tested.
//
//	pending --success×S--> pass     pending --failure×F--> fail
//	pass    --failure----> warn     (fewer than F failures in a row)
//	warn    --success----> pass     warn    --failure×F--> fail
//	fail    --success×S--> pass
func (c counter) next(ok bool, t thresholds) counter {
	if ok {
		c.successes++
		c.failures = 0
	} else {
		c.failures++
		c.successes = 0
	}
	switch {
	case !ok && c.failures >= t.failure:
		c.status = Fail
	case !ok && c.status.passing():
		c.status = Warn
	case ok && c.status == Warn:
		c.status = Pass // one success ends a warning: the check never stopped passing
	case ok && c.successes >= t.success:
		c.status = Pass
	}
	return c
}

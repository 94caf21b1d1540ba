package notify

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// Message is what one datagram of sd_notify's protocol says, as far as
// vitals acts on it. A datagram is assignments, KEY=VALUE, one a line; the
// rest of the protocol (MAINPID=, MONOTONIC_USEC=, BARRIER=1, ERRNO=,
// FDSTORE=1, ...) is read past, as is a line that is no assignment: a
// daemon written for systemd says any of it, and none of it is an error.
type Message struct {
	// Ready is READY=1: the workload has started up, or finished reloading.
	Ready bool
	// Reloading is RELOADING=1: the workload has begun to reload its
	// configuration (systemd's Type=notify-reload), and is not ready until
	// it says READY=1 again.
	Reloading bool
	// Stopping is STOPPING=1: the workload has begun to stop.
	Stopping bool
	// Watchdog is WATCHDOG=1: the workload is alive, for its watchdog.
	Watchdog bool
	// Trigger is WATCHDOG=trigger: the workload asks its watchdog to fail
	// now.
	Trigger bool
	// Status is the text of STATUS=, what the workload says it is doing,
	// when HasStatus.
	Status    string
	HasStatus bool
	// Extend is EXTEND_TIMEOUT_USEC=, when HasExtend: the workload asks for
	// this much more time from now to start up (a value too large for a
	// time.Duration is the largest one, as systemd's adding saturates).
	Extend    time.Duration
	HasExtend bool
	// Invalid says what the message asked that vitals cannot read, and
	// why, such as "EXTEND_TIMEOUT_USEC=soon is no whole number of
	// microseconds"; "" when nothing. That assignment is ignored, as
	// systemd ignores it, and the rest of the message is not.
	Invalid string
}

// ErrNUL is a datagram with a NUL byte in it, which systemd ignores whole:
// no daemon writes one, and no text of it can be trusted to mean what it
// seems.
var ErrNUL = errors.New("a NUL byte in the message")

// Parse reads a datagram as systemd does: an assignment is compared whole
// (READY=1, not READY=yes); of READY=1, RELOADING=1 and STOPPING=1 the last
// is the one meant, and of STATUS=, WATCHDOG= and EXTEND_TIMEOUT_USEC= the
// first.
func Parse(b []byte) (Message, error) {
	if bytes.IndexByte(b, 0) >= 0 {
		return Message{}, ErrNUL
	}
	var m Message
	watchdog, extend := false, false
	for line := range strings.SplitSeq(string(b), "\n") {
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch {
		case line == "READY=1":
			m.Ready, m.Reloading, m.Stopping = true, false, false
		case line == "RELOADING=1":
			m.Ready, m.Reloading, m.Stopping = false, true, false
		case line == "STOPPING=1":
			m.Ready, m.Reloading, m.Stopping = false, false, true
		case key == "STATUS" && !m.HasStatus:
			m.Status, m.HasStatus = value, true
		case key == "WATCHDOG" && !watchdog:
			watchdog = true
			m.Watchdog, m.Trigger = value == "1", value == "trigger"
		case key == "EXTEND_TIMEOUT_USEC" && !extend:
			extend = true
			usec, err := strconv.ParseUint(value, 10, 64)
			if err != nil {
				m.Invalid = line + " is no whole number of microseconds"
				continue
			}
			m.Extend, m.HasExtend = microseconds(usec), true
		}
	}
	return m, nil
}

// microseconds is usec µs as a Duration, the largest one when it holds no
// more: systemd reads EXTEND_TIMEOUT_USEC= as 64 bits of microseconds, a
// Duration holds 63 bits of nanoseconds (292 years).
func microseconds(usec uint64) time.Duration {
	if usec > math.MaxInt64/uint64(time.Microsecond) {
		return math.MaxInt64
	}
	return time.Duration(usec) * time.Microsecond
}

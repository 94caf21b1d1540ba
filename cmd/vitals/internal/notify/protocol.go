package notify

import (
	"bytes"
	"errors"
	"strings"
)

// Message is what one datagram of sd_notify's protocol says, as far as
// vitals acts on it. A datagram is assignments, KEY=VALUE, one a line; the
// rest of the protocol (MAINPID=, RELOADING=1, EXTEND_TIMEOUT_USEC=,
// BARRIER=1, ERRNO=, FDSTORE=1, ...) is read past, as is a line that is no
// assignment: a daemon written for systemd says any of it, and none of it
// is an error.
type Message struct {
	// Ready is READY=1: the workload has started up.
	Ready bool
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
}

// ErrNUL is a datagram with a NUL byte in it, which systemd ignores whole:
// no daemon writes one, and no text of it can be trusted to mean what it
// seems.
var ErrNUL = errors.New("a NUL byte in the message")

// Parse reads a datagram as systemd does: an assignment is compared whole
// (READY=1, not READY=yes); of READY=1, RELOADING=1 and STOPPING=1 the last
// is the one meant, and of STATUS= and WATCHDOG= the first.
func Parse(b []byte) (Message, error) {
	if bytes.IndexByte(b, 0) >= 0 {
		return Message{}, ErrNUL
	}
	var m Message
	watchdog := false
	for line := range strings.SplitSeq(string(b), "\n") {
		key, value, ok := strings.Cut(line, "=")
		if !ok || value != "1" && key != "STATUS" && key != "WATCHDOG" {
			continue
		}
		switch key {
		case "READY":
			m.Ready, m.Stopping = true, false
		case "RELOADING":
			m.Ready, m.Stopping = false, false
		case "STOPPING":
			m.Ready, m.Stopping = false, true
		case "STATUS":
			if !m.HasStatus {
				m.Status, m.HasStatus = value, true
			}
		case "WATCHDOG":
			if !watchdog {
				watchdog = true
				m.Watchdog, m.Trigger = value == "1", value == "trigger"
			}
		}
	}
	return m, nil
}

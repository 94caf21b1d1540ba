package notify

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

func TestParseReadsTheAssignmentsVitalsActsOnAndPassesOverTheRest(t *testing.T) {
	for _, tc := range []struct {
		datagram string
		want     Message
	}{
		{"READY=1", Message{Ready: true}},
		{"READY=1\n", Message{Ready: true}},
		{"READY=1\nSTATUS=Processing requests…", Message{Ready: true, Status: "Processing requests…", HasStatus: true}},
		{"STATUS=", Message{HasStatus: true}},
		{"STATUS=a=b", Message{Status: "a=b", HasStatus: true}},
		{"WATCHDOG=1", Message{Watchdog: true}},
		{"WATCHDOG=trigger", Message{Trigger: true}},
		{"STOPPING=1", Message{Stopping: true}},
		{"RELOADING=1\nMONOTONIC_USEC=81234567", Message{Reloading: true}},
		{"EXTEND_TIMEOUT_USEC=5000000", Message{Extend: 5 * time.Second, HasExtend: true}},
		{"EXTEND_TIMEOUT_USEC=0", Message{HasExtend: true}},
		// systemd reads 64 bits of microseconds; what a Duration cannot
		// hold is the longest one, as systemd's adding saturates.
		{"EXTEND_TIMEOUT_USEC=18446744073709551615", Message{Extend: math.MaxInt64, HasExtend: true}},
		// A value that is no number is ignored, said, and the rest of the
		// message is not.
		{"EXTEND_TIMEOUT_USEC=soon\nSTATUS=migrating", Message{Status: "migrating", HasStatus: true,
			Invalid: "EXTEND_TIMEOUT_USEC=soon is no whole number of microseconds"}},
		{"EXTEND_TIMEOUT_USEC=-1", Message{Invalid: "EXTEND_TIMEOUT_USEC=-1 is no whole number of microseconds"}},
		{"EXTEND_TIMEOUT_USEC=5s", Message{Invalid: "EXTEND_TIMEOUT_USEC=5s is no whole number of microseconds"}},
		{"EXTEND_TIMEOUT_USEC=18446744073709551616", Message{Invalid: "EXTEND_TIMEOUT_USEC=18446744073709551616 is no whole number of microseconds"}},
		// Compared whole, as systemd compares them.
		{"READY=0\nREADY=yes\nREADY = 1\nWATCHDOG=2\nSTOPPING=true", Message{}},
		// Of READY=1, RELOADING=1 and STOPPING=1 the last is meant.
		{"READY=1\nSTOPPING=1", Message{Stopping: true}},
		{"STOPPING=1\nREADY=1", Message{Ready: true}},
		{"READY=1\nRELOADING=1", Message{Reloading: true}},
		{"RELOADING=1\nREADY=1", Message{Ready: true}},
		{"RELOADING=1\nSTOPPING=1", Message{Stopping: true}},
		// Of STATUS=, WATCHDOG= and EXTEND_TIMEOUT_USEC= the first.
		{"STATUS=one\nSTATUS=two", Message{Status: "one", HasStatus: true}},
		{"EXTEND_TIMEOUT_USEC=1000000\nEXTEND_TIMEOUT_USEC=2000000", Message{Extend: time.Second, HasExtend: true}},
		{"EXTEND_TIMEOUT_USEC=soon\nEXTEND_TIMEOUT_USEC=2000000", Message{Invalid: "EXTEND_TIMEOUT_USEC=soon is no whole number of microseconds"}},
		{"WATCHDOG=trigger\nWATCHDOG=1", Message{Trigger: true}},
		{"WATCHDOG=bark\nWATCHDOG=1", Message{}},
		// What a daemon written for systemd says besides, and what is no
		// assignment, are no error.
		{"MAINPID=4242\nREADY=1\nRELOADING=0\nBARRIER=1\nERRNO=2\nFDSTORE=1\nFDNAME=db\nMONOTONIC_USEC=1\nX_VENDOR=1\nno assignment\n\n",
			Message{Ready: true}},
		{"", Message{}},
	} {
		got, err := Parse([]byte(tc.datagram))
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.datagram, got, err, tc.want)
		}
	}
	if _, err := Parse([]byte("READY=1\x00STATUS=x")); !errors.Is(err, ErrNUL) {
		t.Errorf("a message with a NUL byte: %v, want ErrNUL", err)
	}
}

// start is when the run of the table below started.
var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// said replays what a run said: each entry is "SECONDS DATAGRAM", the
// datagram's lines separated by "|", heard that many seconds after the
// start.
func said(entries ...string) run {
	r := run{pid: 42, started: start}
	for _, e := range entries {
		at, datagram, _ := strings.Cut(e, " ")
		var s float64
		fmt.Sscanf(at, "%g", &s)
		m, err := Parse([]byte(strings.ReplaceAll(datagram, "|", "\n")))
		if err != nil {
			panic(err)
		}
		r.apply(m, start.Add(time.Duration(s*float64(time.Second))))
	}
	return r
}

func TestJudge(t *testing.T) {
	s6 := wordsFor(3)
	for _, tc := range []struct {
		name     string
		run      run
		watchdog time.Duration
		words    words
		at       float64 // seconds after the start
		want     string  // "pass: OUTPUT", "fail: OUTPUT" or "undecided: OUTPUT", then " (VALUE s)" for an observed value
	}{
		{"before the run started", run{}, 0, wordsFor(0), 1, "fail: the workload has not started"},
		{"a watchdog before the run started", run{}, 10 * time.Second, wordsFor(0), 1, "fail: the workload has not started"},
		{"waiting for READY=1", said(), 0, wordsFor(0), 2, "fail: no READY=1 since the workload started 2s ago"},
		{"waiting for READY=1 or a newline", said(), 0, s6, 2, "fail: no READY=1 or a newline on fd 3 since the workload started 2s ago"},
		{"waiting, with a status", said("1 STATUS=loading 42%"), 0, wordsFor(0), 0.25, "fail: no READY=1 since the workload started 250ms ago; status: loading 42%"},
		{"ready", said("1 READY=1"), 0, wordsFor(0), 2, "pass: the workload said it is ready"},
		{"ready, with a status", said("1 READY=1|STATUS=serving"), 0, wordsFor(0), 2, "pass: serving"},
		{"the latest status is the output", said("1 READY=1|STATUS=serving", "2 STATUS=busy"), 0, wordsFor(0), 3, "pass: busy"},
		{"an empty status is none", said("1 READY=1|STATUS=serving", "2 STATUS="), 0, wordsFor(0), 3, "pass: the workload said it is ready"},
		{"ready stays ready, whatever the time", said("1 READY=1"), 0, wordsFor(0), 86400, "pass: the workload said it is ready"},
		{"stopping", said("1 READY=1", "5 STOPPING=1|STATUS=shutting down"), 0, wordsFor(0), 6, "fail: the workload said STOPPING=1; status: shutting down"},
		{"WATCHDOG=1 is not READY=1", said("1 WATCHDOG=1"), 0, wordsFor(0), 2, "fail: no READY=1 since the workload started 2s ago"},

		{"reloading", said("1 READY=1|STATUS=serving", "5 RELOADING=1|MONOTONIC_USEC=81234567|STATUS=reloading rules"), 0, wordsFor(0), 7,
			"fail: reloading since 03:04:10, 2s ago (RELOADING=1): waiting for READY=1; status: reloading rules"},
		{"READY=1 ends the reload", said("1 READY=1", "5 RELOADING=1|STATUS=reloading rules", "8 READY=1|STATUS=serving"), 0, wordsFor(0), 9,
			"pass: serving"},
		{"a reload is timed from its first RELOADING=1", said("1 READY=1", "5 RELOADING=1", "6 RELOADING=1"), 0, wordsFor(0), 7.5,
			"fail: reloading since 03:04:10, 2.5s ago (RELOADING=1): waiting for READY=1"},
		{"a reload before the first READY=1 is one too", said("1 RELOADING=1"), 0, wordsFor(0), 2,
			"fail: reloading since 03:04:06, 1s ago (RELOADING=1): waiting for READY=1"},
		{"STOPPING=1 while reloading", said("1 READY=1", "5 RELOADING=1", "6 STOPPING=1"), 0, wordsFor(0), 7,
			"fail: the workload said STOPPING=1"},
		{"a reload does not stop a watchdog, as systemd's goes on", said("1 READY=1", "5 RELOADING=1"), 10 * time.Second, wordsFor(0), 7,
			"pass: the latest WATCHDOG=1 or READY=1 6s ago (watchdog 10s) (6 s)"},

		{"an extension of the start decides nothing until it ends", said("2 EXTEND_TIMEOUT_USEC=30000000|STATUS=migrating"), 0, wordsFor(0), 12,
			"undecided: no READY=1 since the workload started 12s ago; it asked for time until 03:04:37, 20s from now (EXTEND_TIMEOUT_USEC=); status: migrating"},
		{"it fails the moment it ends", said("2 EXTEND_TIMEOUT_USEC=30000000|STATUS=migrating"), 0, wordsFor(0), 32,
			"fail: no READY=1 since the workload started 32s ago, nor in the time it asked for, until 03:04:37 (EXTEND_TIMEOUT_USEC=); status: migrating"},
		{"READY=1 within it passes", said("2 EXTEND_TIMEOUT_USEC=30000000", "20 READY=1"), 0, wordsFor(0), 25,
			"pass: the workload said it is ready"},
		{"a shorter extension does not shorten it", said("2 EXTEND_TIMEOUT_USEC=30000000", "10 EXTEND_TIMEOUT_USEC=5000000"), 0, wordsFor(0), 20,
			"undecided: no READY=1 since the workload started 20s ago; it asked for time until 03:04:37, 12s from now (EXTEND_TIMEOUT_USEC=)"},
		{"a later one asks from its own moment", said("2 EXTEND_TIMEOUT_USEC=30000000", "30 EXTEND_TIMEOUT_USEC=30000000"), 0, wordsFor(0), 40,
			"undecided: no READY=1 since the workload started 40s ago; it asked for time until 03:05:05, 20s from now (EXTEND_TIMEOUT_USEC=)"},
		{"an extension of no time is none", said("2 EXTEND_TIMEOUT_USEC=0"), 0, wordsFor(0), 3,
			"fail: no READY=1 since the workload started 3s ago"},
		{"a reload is not extended: it fails readiness however long it takes", said("1 READY=1", "5 RELOADING=1|EXTEND_TIMEOUT_USEC=60000000"), 0, wordsFor(0), 7,
			"fail: reloading since 03:04:10, 2s ago (RELOADING=1): waiting for READY=1"},
		{"a watchdog is not extended, as systemd's is not", said("1 EXTEND_TIMEOUT_USEC=60000000"), 10 * time.Second, wordsFor(0), 12,
			"fail: no WATCHDOG=1 or READY=1 since the workload started 12s ago (watchdog 10s) (12 s)"},

		{"a watchdog passes from the start, not waiting for READY=1", said(), 10 * time.Second, wordsFor(0), 3,
			"pass: no WATCHDOG=1 or READY=1 yet, 3s after the start (watchdog 10s) (3 s)"},
		{"a watchdog runs out from the start", said(), 10 * time.Second, wordsFor(0), 10,
			"fail: no WATCHDOG=1 or READY=1 since the workload started 10s ago (watchdog 10s) (10 s)"},
		{"a watchdog runs out from the start, in the words of s6 too", said(), 10 * time.Second, s6, 12,
			"fail: no WATCHDOG=1, READY=1 or a newline on fd 3 since the workload started 12s ago (watchdog 10s) (12 s)"},
		{"READY=1 feeds the watchdog", said("8 READY=1"), 10 * time.Second, wordsFor(0), 12,
			"pass: the latest WATCHDOG=1 or READY=1 4s ago (watchdog 10s) (4 s)"},
		{"WATCHDOG=1 feeds it", said("8 READY=1", "15 WATCHDOG=1"), 10 * time.Second, wordsFor(0), 24.5,
			"pass: the latest WATCHDOG=1 or READY=1 9.5s ago (watchdog 10s) (9.5 s)"},
		{"it runs out the moment the watchdog has passed", said("8 READY=1", "15 WATCHDOG=1|STATUS=working"), 10 * time.Second, wordsFor(0), 25,
			"fail: no WATCHDOG=1 or READY=1 for 10s (watchdog 10s); status: working (10 s)"},
		{"a status is the output of a fed watchdog", said("8 READY=1", "15 WATCHDOG=1|STATUS=working"), 10 * time.Second, wordsFor(0), 16,
			"pass: working (1 s)"},
		{"WATCHDOG=trigger fails it at once", said("1 READY=1", "2 WATCHDOG=trigger"), 10 * time.Second, wordsFor(0), 2,
			"fail: the workload said WATCHDOG=trigger (1 s)"},
		{"until the next ping", said("1 READY=1", "2 WATCHDOG=trigger", "3 WATCHDOG=1"), 10 * time.Second, wordsFor(0), 4,
			"pass: the latest WATCHDOG=1 or READY=1 1s ago (watchdog 10s) (1 s)"},
		{"WATCHDOG=trigger does not unready a check without a watchdog", said("1 READY=1", "2 WATCHDOG=trigger"), 0, wordsFor(0), 3,
			"pass: the workload said it is ready"},
		{"STOPPING=1 turns the watchdog off, as systemd's", said("1 READY=1", "2 STOPPING=1"), 10 * time.Second, wordsFor(0), 60,
			"pass: the workload said STOPPING=1: its watchdog is off (59 s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := judge(tc.run, tc.watchdog, tc.words, start.Add(time.Duration(tc.at*float64(time.Second))))
			got := "pass: " + o.Message
			switch {
			case errors.Is(err, health.ErrUndecided):
				got = "undecided: " + err.Error()
			case err != nil:
				got = "fail: " + err.Error()
			}
			if o.Value != nil {
				got += fmt.Sprintf(" (%v %s)", o.Value, o.Unit)
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestAnAnswerChangesWithTimeWhenAWatchdogOrAnExtensionOfTheStartRunsOut(t *testing.T) {
	w := 10 * time.Second
	for _, tc := range []struct {
		name     string
		run      run
		watchdog time.Duration
		want     time.Time
	}{
		{"no watchdog before the run started", run{}, w, time.Time{}},
		{"a watchdog from the start", said(), w, start.Add(w)},
		{"from READY=1", said("3 READY=1"), w, start.Add(13 * time.Second)},
		{"from WATCHDOG=1", said("3 READY=1", "4 WATCHDOG=1"), w, start.Add(14 * time.Second)},
		{"a status moves nothing", said("3 READY=1", "4 STATUS=busy"), w, start.Add(13 * time.Second)},
		{"none once triggered", said("3 WATCHDOG=trigger"), w, time.Time{}},
		{"none once stopping", said("3 STOPPING=1"), w, time.Time{}},
		{"an extension does not move a watchdog", said("3 EXTEND_TIMEOUT_USEC=60000000"), w, start.Add(w)},

		{"nothing without a watchdog", said(), 0, time.Time{}},
		{"the end of the start's extension", said("3 EXTEND_TIMEOUT_USEC=20000000"), 0, start.Add(23 * time.Second)},
		{"nothing once ready", said("3 EXTEND_TIMEOUT_USEC=20000000", "5 READY=1"), 0, time.Time{}},
		{"nothing while reloading", said("3 READY=1", "5 RELOADING=1|EXTEND_TIMEOUT_USEC=20000000"), 0, time.Time{}},
		{"nothing once stopping", said("3 EXTEND_TIMEOUT_USEC=20000000", "5 STOPPING=1"), 0, time.Time{}},
	} {
		if got := tc.run.changes(tc.watchdog); !got.Equal(tc.want) {
			t.Errorf("%s: changes at %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestAMemberIsTheMainProcessItsDescendantsAndItsGroup(t *testing.T) {
	// A /proc of stat files: 100 is the workload (its own group), 101 its
	// child, 102 101's child in a session of its own, 103 a process of its
	// group whose parent died (handed to vitals, 50); 200 another tree.
	proc := t.TempDir()
	for pid, stat := range map[int]string{
		50:  "50 (vitals) S 1 50 50",
		100: "100 (sh) S 50 100 100",
		101: "101 (python3) S 100 100 100",
		102: "102 (daemon) S 101 102 102",
		103: "103 (orphan) S 50 100 100",
		200: "200 (sh) S 50 200 200",
		201: "201 (sdnotify) S 200 200 200",
	} {
		dir := filepath.Join(proc, fmt.Sprint(pid))
		os.Mkdir(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
	}
	for _, tc := range []struct {
		pid  int
		want bool
	}{{100, true}, {101, true}, {102, true}, {103, true}, {50, false}, {200, false}, {201, false}, {1, false}} {
		if got, err := member(proc, tc.pid, 100); err != nil || got != tc.want {
			t.Errorf("member(%d) = %v, %v; want %v", tc.pid, got, err, tc.want)
		}
	}
	if _, err := member(proc, 999, 100); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a process that is gone: %v, want an error that says so", err)
	}
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A fail-pattern check's window is decided at its end both ways: readiness
// fails at the line, and passes again when the window ends, not at the
// check's next period (10s by default, far past the 2s window).
func TestALogWindowPassesAgainWhenItEnds(t *testing.T) {
	const window = 2 * time.Second
	dir := t.TempDir()
	trigger := filepath.Join(dir, "say-it")
	script := fmt.Sprintf("while [ ! -e %q ]; do sleep 0.01; done; echo 'OIDC provider setup failed'; exec sleep 3600", trigger)
	a, _ := importAndRun(t, fmt.Sprintf(`service: {command: [sh, -c, %q]}
checks:
  setup-errors:
    log: {fail-pattern: "setup failed", window: %v}
`, script, window))
	waitReadyzIs(t, a.addr, 200, a.logs)
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The line came between the last poll that saw 200 (lastOK) and the
	// first that saw 503 (failed): the window ends between them plus the
	// window, however late a loaded machine polls.
	var failed, lastOK time.Time
	for deadline := time.Now().Add(20 * time.Second); failed.IsZero(); time.Sleep(5 * time.Millisecond) {
		asked := time.Now()
		if readyz(a.addr) == 503 {
			failed = time.Now()
		} else {
			lastOK = asked
		}
		if time.Now().After(deadline) {
			t.Fatalf("readiness did not fail at the line; logs:\n%s", a.logs)
		}
	}
	var passed time.Time
	for deadline := failed.Add(8 * time.Second); passed.IsZero(); time.Sleep(5 * time.Millisecond) {
		if readyz(a.addr) == 200 {
			passed = time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("readiness did not pass again within 8s of the line (the window is %v, the period 10s); logs:\n%s", window, a.logs)
		}
	}
	if late := passed.Sub(failed) - window; late > 200*time.Millisecond {
		t.Fatalf("readiness passed %v after the window's end, want within 200ms of it; logs:\n%s", late, a.logs)
	}
	if early := lastOK.Add(window).Sub(passed); early > 10*time.Millisecond {
		t.Fatalf("readiness passed %v before the window could have ended; logs:\n%s", early, a.logs)
	}
}

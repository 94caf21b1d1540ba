//go:build !vitals_probe

package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
)

// events lists every event the agent kept; --after those after an id,
// and -o json as JSON lines.
func TestEventsListsTheKeptEvents(t *testing.T) {
	a := startAPIAgent(t)
	vitals("beat", "work-loop")
	waitStatus(t, "work-loop", health.Pass)
	o := vitals("events")
	o.expect(t, 0, "  check-failed  peer-config (ready) pending -> fail: "+a.missing+"\n", "")
	o.expect(t, 0, "  check-passed  work-loop (live) pending -> pass\n", "")
	lastID := lastEventID(t)
	o = vitals("events", "--after", fmt.Sprint(lastID-1), "-o", "json")
	var e health.Event
	if err := json.Unmarshal([]byte(o.stdout), &e); err != nil || o.code != 0 || e.ID != lastID || strings.Count(o.stdout, "\n") != 1 {
		t.Fatalf("events --after %d -o json: %v %+v", lastID-1, err, o)
	}
}

// events --follow prints new events until interrupted, then exits 0.
func TestEventsFollowPrintsNewEventsUntilInterrupted(t *testing.T) {
	a := startAPIAgent(t)
	a.writeConf(t)
	waitStatus(t, "peer-config", health.Pass)
	lastID := lastEventID(t)
	var out vitalstest.Buffer
	followed := make(chan int, 1)
	go func() { followed <- vitalsAPI(&out, io.Discard, "events", "--follow", "--after", fmt.Sprint(lastID)) }()
	os.Remove(a.conf) // peer-config fails again: a new event
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "check-failed  peer-config"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("events --follow printed no new event within 10s: %q", out.String())
		}
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT) // the command's handler has been set since before its first request
	select {
	case code := <-followed:
		if code != 0 {
			t.Fatalf("events --follow exited %d on an interrupt", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("events --follow did not stop within 10s of an interrupt")
	}
}

// Following when the agent stops: it says stopping, and the command ends,
// 0; the agent leaves no socket behind.
func TestEventsFollowEndsWhenTheAgentStops(t *testing.T) {
	a := startAPIAgent(t)
	lastID := lastEventID(t)
	vitals("beat", "work-loop") // an event to follow
	var out vitalstest.Buffer
	followed := make(chan int, 1)
	go func() {
		followed <- vitalsAPI(&out, io.Discard, "events", "-f", "-o", "json", "--after", fmt.Sprint(lastID))
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), `"id":`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("events -f printed nothing within 10s")
		}
	}
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-followed:
		if code != 0 || !strings.Contains(out.String(), `"type":"stopping"`) {
			t.Fatalf("events -f exited %d when the agent stopped, having printed:\n%s", code, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("events -f did not end within 10s of the agent stopping")
	}
	if _, err := os.Lstat(a.sock); !os.IsNotExist(err) {
		t.Fatalf("the socket is left after the agent stopped: %v", err)
	}
}

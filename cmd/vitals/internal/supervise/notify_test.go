package supervise

import (
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
)

// A run that the supervisor starts as vitals (Spec.WatchdogPID) is this test
// binary: it executes the workload first, as vitals's main does.
func init() { ExecWorkload() }

// heard is a Notify that keeps what it was told.
type heard struct {
	mu    sync.Mutex
	told  []string // "starting N" and "started N PID", in order
	pipes []*os.File
}

func (h *heard) Starting(run int, pipe *os.File) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.told = append(h.told, "starting "+strconv.Itoa(run))
	h.pipes = append(h.pipes, pipe)
}

func (h *heard) Started(run, pid int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.told = append(h.told, "started "+strconv.Itoa(run)+" "+strconv.Itoa(pid))
}

func (h *heard) list() ([]string, []*os.File) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.told), slices.Clone(h.pipes)
}

// readAll reads what the workload wrote to a notification pipe until it
// ends; the wait is a guard only.
func readAll(t *testing.T, pipe *os.File) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(pipe)
		got <- string(b)
	}()
	select {
	case s := <-got:
		return s
	case <-time.After(20 * time.Second):
		t.Fatal("the notification pipe did not end within 20s")
		return ""
	}
}

func TestEachRunWritesToItsOwnNotificationPipeAtTheDescriptorAsked(t *testing.T) {
	h := &heard{}
	// 5, not 3: the descriptors between are closed in the run, not the
	// pipe's.
	sv, _, ready := workload(t, Spec{Service: config.Service{NotificationFD: 5}, Notify: h}, "notify-fd", "5")
	first := workloadtest.WaitPID(t, ready)
	told, pipes := h.list()
	if want := []string{"starting 0", "started 0 " + strconv.Itoa(first)}; !slices.Equal(told, want) || pipes[0] == nil {
		t.Fatalf("told %q with pipes %v, want %q with a pipe", told, pipes, want)
	}
	os.Remove(ready)
	if !sv.Restart("restart requested", 0, Hand, 0) {
		t.Fatal("the restart was refused")
	}
	// The first run's pipe ends with it (a newline, then the end: vitals
	// held no write end of it), and the second run writes to its own.
	if got := readAll(t, pipes[0]); got != "\n" {
		t.Fatalf("the first run's pipe held %q, want a newline", got)
	}
	second := workloadtest.WaitPID(t, ready)
	told, pipes = h.list()
	if want := []string{"starting 0", "started 0 " + strconv.Itoa(first), "starting 1", "started 1 " + strconv.Itoa(second)}; !slices.Equal(told, want) || pipes[1] == nil {
		t.Fatalf("told %q with pipes %v, want %q with a pipe", told, pipes, want)
	}
	buf := make([]byte, 1)
	if n, err := pipes[1].Read(buf); n != 1 || buf[0] != '\n' {
		t.Fatalf("the second run's pipe: %q, %v; want a newline", buf[:n], err)
	}
}

func TestNoNotificationDescriptorBelow3(t *testing.T) {
	_, err := Start(Spec{Service: config.Service{Command: []string{"true"}, NotificationFD: 2}}, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "notification descriptor 2: 0, 1 and 2 are the workload's standard input, output and error") {
		t.Fatalf("got %v", err)
	}
}

func TestWatchdogPIDIsTheRunsOwnPid(t *testing.T) {
	t.Setenv("WATCHDOG_PID", "1") // vitals's own, from a manager above it: not the run's
	_, _, ready := workload(t, Spec{WatchdogPID: true}, "env", "WATCHDOG_PID", execEnv)
	pid := workloadtest.WaitPID(t, ready)
	b, err := os.ReadFile(ready + ".env")
	if want := "WATCHDOG_PID=" + strconv.Itoa(pid) + "\n"; err != nil || string(b) != want {
		t.Fatalf("the run's environment has %q (%v), want %q and no %s", b, err, want, execEnv)
	}
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/internal/testenv"
)

// children lists the processes whose parent is pid, with their state (R, S,
// Z …), from the host's /proc.
func children(pid int) map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
			out[child] = f[0]
		}
	}
	return out
}

// As PID 1 of a PID namespace (a container's init), vitals is the parent
// of every orphan of its workload, and reaps each one as it exits.
func TestAsPID1ItReapsEveryOrphan(t *testing.T) {
	if out, err := exec.Command("unshare", "--pid", "--fork", "true").CombinedOutput(); err != nil {
		testenv.Missing(t, "this machine does not allow a new PID namespace (unshare --pid --fork: %v: %s); run as root to test vitals as PID 1", err, bytes.TrimSpace(out))
	}
	const orphans = 5
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nchecks:\n  a: {heartbeat: {ttl: 1h}}\n", freeAddr(t), filepath.Join(dir, "vitals.sock")))
	cmd := exec.Command("unshare", "--pid", "--fork", vitals, "run", "-c", path, "--", os.Args[0], "orphans", ready, strconv.Itoa(orphans))
	cmd.Env = append(os.Environ(), workloadtest.Env+"=1")
	logs := &vitalstest.Buffer{}
	cmd.Stderr = logs
	cmd.WaitDelay = 2 * time.Second
	// The ready file holds a pid of the namespace: never kill by it here.
	// Killing vitals, the namespace's PID 1, takes every process in it.
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var pid1 int // vitals, as the host sees it: unshare's child
	for deadline := time.Now().Add(20 * time.Second); pid1 == 0; time.Sleep(10 * time.Millisecond) {
		for child := range children(cmd.Process.Pid) {
			pid1 = child
		}
		if time.Now().After(deadline) {
			t.Fatalf("unshare started no vitals within 20s; logs:\n%s", logs)
		}
	}
	t.Cleanup(func() { syscall.Kill(pid1, syscall.SIGKILL) })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(ready); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workload was not ready within 20s; logs:\n%s", logs)
		}
	}
	// The orphans are handed to vitals: the workload and them are its
	// children while they sleep.
	if n := len(children(pid1)); n < 1+orphans {
		t.Fatalf("vitals (host pid %d) has %d children, want the workload and its %d orphans: %v", pid1, n, orphans, children(pid1))
	}
	// They exit after 3s; vitals reaps them: no zombie is left under it.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left := children(pid1)
		if len(left) == 1 {
			for _, state := range left {
				if state == "Z" {
					t.Fatalf("the workload is a zombie: %v", left)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("20s on, vitals still has children besides the workload: %v (Z is a zombie not reaped); logs:\n%s", left, logs)
		}
	}
	if strings.Contains(logs.String(), "cannot become a subreaper") {
		t.Errorf("vitals as PID 1 tried to become a subreaper; logs:\n%s", logs)
	}
	syscall.Kill(pid1, syscall.SIGTERM)
	if code := exited(t, cmd); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit %d, want 143, the workload's SIGTERM; logs:\n%s", code, logs)
	}
}

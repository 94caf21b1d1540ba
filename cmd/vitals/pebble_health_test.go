//go:build !vitals_probe

package main

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
)

// underPebble is vitals run as the service of docs/pebble.md's layer, under
// a real Pebble, its workload this test binary (sleep).
type underPebble struct {
	*vitalstest.Pebble
	service string // vitals's, the layer's one service
	addr    string // vitals's listen
	ready   string // the workload's ready file: its pid
	dir     string
}

// startUnderPebble runs vitals with checks under Pebble as a charm's
// workload container does: the layer of docs/pebble.md as it is, and a
// layer over it with what is this test's (the command, vitals's address,
// short periods and a kill-delay above vitals's stop-timeout of 1s). Pebble
// serves its open API on --http, as under Juju.
func startUnderPebble(t *testing.T, checks func(dir string) string) *underPebble {
	t.Helper()
	u := &underPebble{addr: freeAddr(t), dir: vitalstest.ShortDir(t)}
	u.ready = filepath.Join(u.dir, "ready")
	file := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nservice: {stop-timeout: 1s}\n%s",
		u.addr, filepath.Join(u.dir, "vitals.sock"), checks(u.dir)))
	layer := documentedLayer(t)
	var parsed struct{ Services map[string]any }
	if err := yaml.Unmarshal([]byte(layer), &parsed); err != nil || len(parsed.Services) != 1 {
		t.Fatalf("docs/pebble.md's layer has %d services (%v), want vitals's one:\n%s", len(parsed.Services), err, layer)
	}
	u.service = slices.Collect(maps.Keys(parsed.Services))[0]
	u.Pebble = vitalstest.NewPebble(t, layer)
	ours := fmt.Sprintf(`summary: this test's vitals, address and periods
services:
  %s:
    override: merge
    command: %s run -c %s -- %s sleep %s
    kill-delay: 2s
checks:
  vitals-alive:
    override: merge
    period: 500ms
    timeout: 300ms
    http: {url: "http://%[6]s/livez"}
  vitals-ready:
    override: merge
    period: 200ms
    timeout: 150ms
    http: {url: "http://%[6]s/readyz"}
`, u.service, vitals, file, os.Args[0], u.ready, u.addr)
	if err := os.WriteFile(filepath.Join(u.Dir, "layers", "002-this-test.yaml"), []byte(ours), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killWorkload(u.ready) }) // after Pebble has stopped vitals, a guard
	u.HTTP = freeAddr(t)
	u.Start(t, workloadtest.Env+"=1")
	return u
}

// documentedLayer is the Pebble layer of docs/pebble.md: the block that
// says so on its first line.
func documentedLayer(t *testing.T) string {
	t.Helper()
	_, blocks, err := readPage(t, filepath.Join("docs", "pebble.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if strings.HasPrefix(b.text, "# Pebble layer:") {
			return b.text
		}
	}
	t.Fatal("docs/pebble.md shows no block beginning # Pebble layer:")
	return ""
}

// waitHealth waits (a guard only) until `pebble health --level=level`
// says healthy (exit 0) or unhealthy (exit 1), as want says.
func (u *underPebble) waitHealth(t *testing.T, level string, want bool) {
	t.Helper()
	says, code := "unhealthy\n", 1
	if want {
		says, code = "healthy\n", 0
	}
	var out string
	var got int
	u.WaitFor(t, fmt.Sprintf("pebble health --level=%s saying %q", level, says), func() bool {
		out, got = u.CLIExit(t, "health", "--level="+level)
		return got == code
	})
	if out != says {
		t.Fatalf("pebble health --level=%s: exit %d, %q; want %q", level, got, out, says)
	}
}

// probe is what Juju's probe of level gets from Pebble's /v1/health.
func (u *underPebble) probe(t *testing.T, level string) int {
	t.Helper()
	res, err := http.Get("http://" + u.HTTP + "/v1/health?level=" + level)
	if err != nil {
		t.Fatalf("Juju's %s probe: %v", level, err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Pebble's ready level follows vitals's readiness, check for check: with
// the documented layer, `pebble health --level=ready` (and the
// /v1/health?level=ready of Juju's readiness probe) fails while a vitals
// check fails, and passes again once it passes; the alive level stays up.
func TestPebbleHealthFollowsVitalsReadiness(t *testing.T) {
	u := startUnderPebble(t, func(dir string) string {
		return fmt.Sprintf(`checks:
  peer-config:
    file: {path: %s}
    period: 100ms
    failure-threshold: 1
`, filepath.Join(dir, "peers.conf"))
	})
	peers := filepath.Join(u.dir, "peers.conf")
	for i := range 2 {
		u.waitHealth(t, "ready", false)
		if i == 0 {
			if code := u.probe(t, "ready"); code != http.StatusBadGateway {
				t.Fatalf("Juju's readiness probe gets %d, want 502", code)
			}
			if code := u.probe(t, "alive"); code != http.StatusOK {
				t.Fatalf("Juju's liveness probe gets %d, want 200: a check that fails readiness is no reason to restart", code)
			}
			u.waitHealth(t, "alive", true)
			// Its error is vitals's answer: peer-config pending, or failed.
			if out := u.CLI(t, "check", "vitals-ready"); !strings.Contains(out, "status: down") || !strings.Contains(out, "[-]peer-config ") {
				t.Fatalf("pebble check vitals-ready does not say why:\n%s", out)
			}
		}
		if err := os.WriteFile(peers, []byte("peers"), 0o600); err != nil {
			t.Fatal(err)
		}
		u.waitHealth(t, "ready", true)
		if code := u.probe(t, "ready"); code != http.StatusOK {
			t.Fatalf("Juju's readiness probe gets %d, want 200", code)
		}
		if err := os.Remove(peers); err != nil {
			t.Fatal(err)
		}
	}
}

// A vitals that stops answering is restarted by Pebble, through the
// documented layer's vitals-alive check and its on-check-failure: Pebble
// kills the frozen vitals (SIGTERM goes unheard, then SIGKILL after
// kill-delay), its workload dies with it, and a new vitals, under the same
// Pebble, runs a new workload and serves again. Meanwhile the ready level
// fails.
func TestPebbleRestartsAFrozenVitals(t *testing.T) {
	u := startUnderPebble(t, func(dir string) string {
		return fmt.Sprintf("checks:\n  started:\n    file: {path: %s}\n    period: 100ms\n", filepath.Join(dir, "ready"))
	})
	workload := workloadtest.WaitPID(t, u.ready)
	_, frozen := procState(workload)
	_, pebble := procState(frozen)
	t.Cleanup(func() {
		syscall.Kill(frozen, syscall.SIGKILL)
		syscall.Kill(-workload, syscall.SIGKILL)
	})
	u.waitHealth(t, "ready", true)
	if err := syscall.Kill(frozen, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	u.waitHealth(t, "ready", false)

	var vitalsNow, workloadNow int
	u.WaitFor(t, "a new vitals, its workload started and serving", func() bool {
		workloadNow = pidOf(u.ready)
		if workloadNow == workload {
			return false
		}
		_, vitalsNow = procState(workloadNow)
		return vitalsNow != 0 && vitalsNow != frozen && readyz(u.addr) == http.StatusOK
	})
	if _, parent := procState(vitalsNow); parent != pebble {
		t.Fatalf("the new vitals %d is the child of %d, want Pebble's, %d", vitalsNow, parent, pebble)
	}
	if !strings.Contains(u.Log.String(), fmt.Sprintf(`Service %q on-check-failure action is "restart"`, u.service)) {
		t.Fatalf("Pebble's log says no restart by vitals-alive:\n%s", u.Log)
	}
	u.WaitFor(t, fmt.Sprintf("the frozen vitals %d gone", frozen), func() bool { return gone(frozen) })
	u.WaitFor(t, fmt.Sprintf("the frozen vitals's workload %d gone (it dies with vitals)", workload), func() bool { return gone(workload) })
	u.waitHealth(t, "alive", true)
	u.waitHealth(t, "ready", true)
}

// pidOf is the pid in a workload's ready file; 0 while it has none.
func pidOf(ready string) int {
	var pid int
	b, _ := os.ReadFile(ready)
	fmt.Sscan(string(b), &pid)
	return pid
}

// gone reports whether pid has exited: no such process, or a zombie.
func gone(pid int) bool {
	state, _ := procState(pid)
	return state == "" || state == "Z"
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
)

// waitNotice waits (a guard only) until Pebble has the custom notice key
// with occurrences, and returns it.
func waitNotice(t *testing.T, p *vitalstest.Pebble, key string, occurrences int, logs fmt.Stringer) vitalstest.PebbleNotice {
	t.Helper()
	var n []vitalstest.PebbleNotice
	p.WaitFor(t, fmt.Sprintf("notice %s of %d occurrences (vitals's logs:\n%s\n)", key, occurrences, logs), func() bool {
		n = p.Notices(t, key)
		return len(n) == 1 && n[0].Occurrences >= occurrences
	})
	if n[0].Occurrences != occurrences {
		t.Fatalf("notice %s has %d occurrences, want %d", key, n[0].Occurrences, occurrences)
	}
	return n[0]
}

// The Kubeflow story's wake-up, with a real Pebble: a check that fails is a
// custom notice vitals.dev/check-failed with the check's data, as `pebble
// notices` and `pebble notice` show it; failing again after passing is one
// more occurrence of the same notice, not another notice; and the
// workload's exit when vitals stops gets there too.
func TestAFailingCheckWakesPebble(t *testing.T) {
	p := vitalstest.StartPebble(t, "")
	a := startAgent(t, func(a *agent) string {
		return fmt.Sprintf(`checks:
  peer-config:
    file: {path: %s}
    period: 100ms
    failure-threshold: 1
hooks:
  - pebble-notice: {socket: %s}
`, filepath.Join(a.dir, "peers.conf"), p.Socket)
	}, "sleep")

	n := waitNotice(t, p, "vitals.dev/check-failed", 1, a.logs)
	if d := n.LastData; d["check"] != "peer-config" || d["level"] != "ready" || d["from"] != "pending" || d["to"] != "fail" ||
		!strings.HasPrefix(d["output"], "stat "+filepath.Join(a.dir, "peers.conf")) || d["type"] != "check-failed" {
		t.Fatalf("data %v, want the check's failure", d)
	}
	if n.UserID == nil || *n.UserID != uint32(os.Getuid()) {
		t.Fatalf("user id %v, want vitals's, %d", n.UserID, os.Getuid())
	}
	id := n.ID
	show := p.CLI(t, "notice", id)
	for _, want := range []string{"key: vitals.dev/check-failed\n", "occurrences: 1\n", "    check: peer-config\n", "    to: fail\n"} {
		if !strings.Contains(show, want) {
			t.Fatalf("pebble notice %s lacks %q:\n%s", id, want, show)
		}
	}

	if err := os.WriteFile(filepath.Join(a.dir, "peers.conf"), []byte("peers"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitNotice(t, p, "vitals.dev/check-passed", 1, a.logs)
	if err := os.Remove(filepath.Join(a.dir, "peers.conf")); err != nil {
		t.Fatal(err)
	}
	n = waitNotice(t, p, "vitals.dev/check-failed", 2, a.logs)
	if n.ID != id || n.LastData["from"] != "pass" {
		t.Fatalf("notice %s from %s, want notice %s again, from pass", n.ID, n.LastData["from"], id)
	}
	list := p.CLI(t, "notices")
	if got := regexp.MustCompile(`(?m)^`+id+` +\d+ +custom +vitals\.dev/check-failed .* 2$`).FindAllString(list, -1); len(got) != 1 ||
		strings.Count(list, "vitals.dev/check-failed") != 1 {
		t.Fatalf("pebble notices shows vitals.dev/check-failed %d times, want once, of 2 occurrences:\n%s", len(got), list)
	}

	a.cmd.Process.Signal(syscall.SIGTERM)
	if code := exited(t, a.cmd); code != 143 && code != 0 {
		t.Fatalf("vitals exited %d; logs:\n%s", code, a.logs)
	}
	exit := p.Notices(t, "vitals.dev/service-exited")
	if len(exit) != 1 || exit[0].LastData["reason"] != "stopping" || exit[0].LastData["signal"] != "SIGTERM" {
		t.Fatalf("notices %+v, want the workload's exit as vitals stopped", exit)
	}
}

// vitals as a Pebble service, as a charm's workload container runs it: it
// finds Pebble's socket through the environment Pebble gives its services
// ($PEBBLE here; Juju also sets $PEBBLE_SOCKET), with nothing in its file.
func TestVitalsAsAPebbleServiceFindsItsPebble(t *testing.T) {
	dir := vitalstest.ShortDir(t)
	file := writeConfig(t, fmt.Sprintf(`listen: %s
api: %s
checks:
  oidc:
    level: live
    http: {url: "http://%s/"}
    period: 100ms
    failure-threshold: 2
hooks:
  - pebble-notice: {}
`, freeAddr(t), filepath.Join(dir, "vitals.sock"), closedPort(t)))
	p := vitalstest.StartPebble(t, fmt.Sprintf(`summary: the workload's checks
services:
  vitals:
    override: replace
    command: %s run -c %s
    startup: enabled
`, vitals, file))
	n := waitNotice(t, p, "vitals.dev/check-failed", 1, p.Log)
	if n.LastData["check"] != "oidc" || n.LastData["level"] != "live" {
		t.Fatalf("data %v, want oidc's failure", n.LastData)
	}
	// A live check that fails fails live, then ready: two occurrences of
	// one notice, the last ready's.
	if n := waitNotice(t, p, "vitals.dev/level-failed", 2, p.Log); n.LastData["level"] != "ready" ||
		!strings.HasPrefix(n.LastData["output"], `check "oidc" is fail`) {
		t.Fatalf("data %v, want ready failed by oidc", n.LastData)
	}
	if out := p.CLI(t, "services"); !regexp.MustCompile(`vitals +enabled +active`).MatchString(out) {
		t.Fatalf("pebble services:\n%s", out)
	}
}

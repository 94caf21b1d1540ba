package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/testenv"
)

// rewrite writes the agent's file anew with checks.
func (a *agent) rewrite(t *testing.T, checks string) {
	t.Helper()
	a.writeIn(t, a.file, a.header()+checks)
}

// checksNow is the agent's checks by name, as GET /v1/checks lists them.
func checksNow(t *testing.T, c *client.Client) map[string]client.Check {
	t.Helper()
	list, err := c.Checks(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]client.Check{}
	for _, ch := range list {
		out[ch.Name] = ch
	}
	return out
}

// vitals reload applies what changed of the checks as a difference: the
// unchanged check runs on (its count and history continue, across 20
// reloads), a retimed one keeps its status and takes its new period, a
// removed one is gone, an added one appears; the workload is the same
// process. A file that does not load is refused with its position, exit 2,
// and nothing changes: /readyz answers as before, and a config-rejected
// event says why.
func TestReloadAppliesWhatChangedAndKeepsTheRest(t *testing.T) {
	file := os.Args[0] // a file that is there
	checks := func(bPeriod string, tail string) string {
		return fmt.Sprintf(`checks:
  a: {file: {path: %s}, period: 50ms}
  b: {file: {path: %s}, period: %s}
%s`, file, file, bPeriod, tail)
	}
	a := startAgent(t, func(*agent) string {
		return checks("100ms", fmt.Sprintf("  c: {file: {path: %s}, period: 50ms}\n", file))
	}, "sleep")
	pid := pidIn(t, a.ready)
	c, err := client.New(a.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a to run a few times", a.logs, func() bool { return checksNow(t, c)["a"].Runs >= 3 })
	before := checksNow(t, c)

	a.rewrite(t, checks("200ms", fmt.Sprintf("  d: {file: {path: %s}, period: 50ms}\n", file)))
	r := a.vitals(t, "reload")
	r.expect(t, 0, "reloaded: added d; retimed b; removed c\n", "")
	after := checksNow(t, c)
	if _, ok := after["c"]; ok {
		t.Errorf("c is still there after it was removed: %+v", after["c"])
	}
	if d, ok := after["d"]; !ok || d.Level != health.Ready {
		t.Errorf("d after it was added: %+v %v", d, ok)
	}
	if b := after["b"]; time.Duration(b.Period) != 200*time.Millisecond || b.Status != health.Pass || b.Runs < before["b"].Runs {
		t.Errorf("b after its period changed: %+v, want 200ms, still passing, its runs counted on from %d", b, before["b"].Runs)
	}
	if got := after["a"].Runs; got < before["a"].Runs {
		t.Errorf("a's runs went from %d to %d: it started over", before["a"].Runs, got)
	}

	// 20 reloads, b's period back and forth: a runs on through them all.
	for i := range 20 {
		a.rewrite(t, checks([]string{"100ms", "200ms"}[i%2], fmt.Sprintf("  d: {file: {path: %s}, period: 50ms}\n", file)))
		if _, err := c.Reload(context.Background()); err != nil {
			t.Fatalf("reload %d: %v", i, err)
		}
	}
	runs := checksNow(t, c)["a"].Runs
	waitFor(t, "a to run on after the reloads", a.logs, func() bool { return checksNow(t, c)["a"].Runs > runs })
	if runs < after["a"].Runs {
		t.Errorf("a's runs went from %d to %d over 20 reloads", after["a"].Runs, runs)
	}
	if got := pidIn(t, a.ready); got != pid {
		t.Errorf("the workload is %d after the reloads, was %d", got, pid)
	}

	// A file that does not load: refused with its position, nothing changed.
	a.rewrite(t, checks("100ms", "  e: {http: {url: 5}}\n"))
	ready := readyz(a.addr)
	r = a.vitals(t, "reload")
	if r.code != 2 || !strings.Contains(r.stderr, a.file+":6:13: checks.e.http: URL \"5\"") {
		t.Fatalf("a bad file: exit %d, %q; want 2 and the error at its position", r.code, r.stderr)
	}
	if now := checksNow(t, c); len(now) != 3 || time.Duration(now["b"].Period) != 200*time.Millisecond {
		t.Errorf("checks after a refused reload: %v, want a, b (200ms) and d as they were", now)
	}
	if got := readyz(a.addr); got != ready {
		t.Errorf("/readyz %d after a refused reload, %d before", got, ready)
	}
	evs := a.events(t, 0)
	var reloaded, rejected int
	for _, e := range evs {
		switch e.Type {
		case health.EventConfigReloaded:
			reloaded++
		case health.EventConfigRejected:
			rejected++
			if !strings.Contains(e.Output, "checks.e.http: URL") || e.Reason != "vitals reload" {
				t.Errorf("config-rejected: %+v", e)
			}
		}
	}
	if reloaded != 21 || rejected != 1 {
		t.Errorf("%d config-reloaded and %d config-rejected events, want 21 and 1", reloaded, rejected)
	}
	// A change a reload cannot apply: refused, saying why.
	a.rewrite(t, "grpc-listen: 127.0.0.1:0\n"+checks("200ms", fmt.Sprintf("  d: {file: {path: %s}, period: 50ms}\n", file)))
	_, err = c.Reload(context.Background())
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 400 || !strings.Contains(e.Message, "grpc-listen: changed: grpc-health-probe and the kubelet's gRPC probes reach gRPC health at the address vitals bound at start") {
		t.Fatalf("a changed grpc-listen: %v", err)
	}
}

// The parts of the file besides checks reload too: ui: false takes the
// status page away and details: none withholds the reasons, from the next
// request on; back again, both return. The checks run on through it, and
// the config-reloaded event names the parts.
func TestReloadAppliesThePartsBesidesChecks(t *testing.T) {
	file := os.Args[0]
	checks := fmt.Sprintf("checks:\n  a: {file: {path: %s}, period: 50ms}\n  gone: {file: {path: %s/nowhere}, period: 50ms}\n", file, file)
	a := startAgent(t, func(*agent) string { return checks }, "sleep")
	pidIn(t, a.ready)
	c, err := client.New(a.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		t.Helper()
		res, err := http.Get("http://" + a.addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	waitFor(t, "gone to fail", a.logs, func() bool { return checksNow(t, c)["gone"].Status == health.Fail })
	if code, body := get("/readyz?verbose"); code != 503 || !strings.Contains(body, "nowhere") {
		t.Fatalf("/readyz?verbose before: %d %q, want 503 with gone's reason", code, body)
	}
	if code, _ := get("/"); code != 200 {
		t.Fatalf("the status page before: %d, want 200", code)
	}
	runs := checksNow(t, c)["a"].Runs

	a.rewrite(t, "ui: false\ndetails: none\ndrain: 1s\n"+checks)
	a.vitals(t, "reload").expect(t, 0, "reloaded: applied details, ui, drain\n", "")
	if code, body := get("/readyz?verbose"); code != 503 || strings.Contains(body, "nowhere") || !strings.Contains(body, "reason withheld") {
		t.Errorf("/readyz?verbose with details: none: %d %q, want 503 with the reason withheld", code, body)
	}
	if code, _ := get("/"); code != 404 {
		t.Errorf("the status page with ui: false: %d, want 404", code)
	}

	a.rewrite(t, "service-info: {service-id: checkout}\n"+checks)
	a.vitals(t, "reload").expect(t, 0, "reloaded: applied details, ui, service-info, drain\n", "")
	if code, body := get("/readyz?format=json"); code != 503 || !strings.Contains(body, `"serviceId":"checkout"`) {
		t.Errorf("/readyz?format=json with service-info: %d %q, want its serviceId", code, body)
	}
	if code, body := get("/readyz?verbose"); code != 503 || !strings.Contains(body, "nowhere") {
		t.Errorf("/readyz?verbose back to details: local: %d %q, want gone's reason", code, body)
	}
	if code, _ := get("/"); code != 200 {
		t.Errorf("the status page back again: %d, want 200", code)
	}
	if now := checksNow(t, c)["a"].Runs; now < runs {
		t.Errorf("a's runs went from %d to %d: it started over", runs, now)
	}
	var said []string
	for _, e := range a.events(t, 0) {
		if e.Type == health.EventConfigReloaded {
			said = append(said, e.Output)
		}
	}
	if fmt.Sprint(said) != "[applied details, ui, drain applied details, ui, service-info, drain]" {
		t.Errorf("config-reloaded events say %q", said)
	}
}

// SIGHUP reloads the file, and still reaches the workload: one that exits
// 42 on SIGHUP does, and the event log has both.
func TestSIGHUPReloadsTheFileAndReachesTheWorkload(t *testing.T) {
	file := os.Args[0]
	// Restarted when it exits, so that vitals runs on after the signal.
	const service = "service: {restart: always, backoff: {initial: 10ms}}\n"
	a := startAgent(t, func(*agent) string {
		return fmt.Sprintf(service+"checks:\n  a: {file: {path: %s}, period: 50ms}\n", file)
	}, "hup")
	pidIn(t, a.ready)
	a.rewrite(t, fmt.Sprintf(service+"checks:\n  a: {file: {path: %s}, period: 50ms}\n  b: {file: {path: %s}}\n", file, file))
	if err := a.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	evs := a.waitEvent(t, "the workload's exit", func(e health.Event) bool { return e.Type == health.EventServiceExited })
	if code := evs[len(evs)-1].ExitCode; code == nil || *code != 42 {
		t.Fatalf("the workload exited with %v, want 42: the code of its SIGHUP", code)
	}
	a.waitEvent(t, "config-reloaded", func(e health.Event) bool {
		return e.Type == health.EventConfigReloaded && e.Output == "added b" && e.Reason == "SIGHUP"
	})
}

// With --watch, a change of the file on disk is applied within 2s, however
// it is made: a write in place, an editor's write renamed over it, and a
// Kubernetes ConfigMap's update (a new directory, the ..data symlink swapped
// to it, the old one deleted). A write that does not load is refused, and
// /readyz answers as before.
func TestWatchAppliesEachWayAFileChanges(t *testing.T) {
	file := os.Args[0]
	before := fmt.Sprintf("checks:\n  a: {file: {path: %s}, period: 50ms}\n", file)
	after := before + fmt.Sprintf("  d: {file: {path: %s}, period: 50ms}\n", file)
	updates := 0 // of the ConfigMap: each its own directory, as the kubelet's
	for _, tc := range []struct {
		name   string
		layout func(dir string) string // makes the file's place, and returns its path
		change func(t *testing.T, a *agent, text string)
	}{
		{"a write in place", func(dir string) string { return filepath.Join(dir, "vitals.yaml") },
			func(t *testing.T, a *agent, text string) { a.writeIn(t, a.file, text) }},
		{"an editor's rename", func(dir string) string { return filepath.Join(dir, "vitals.yaml") },
			func(t *testing.T, a *agent, text string) {
				tmp := filepath.Join(filepath.Dir(a.file), ".vitals.yaml.swp")
				a.writeIn(t, tmp, text)
				if err := os.Rename(tmp, a.file); err != nil {
					t.Fatal(err)
				}
			}},
		{"a ConfigMap's update", func(dir string) string {
			// As the kubelet mounts one: vitals.yaml -> ..data/vitals.yaml,
			// ..data -> ..2026_12_07_05_00_00.1.
			first := filepath.Join(dir, "..2026_12_07_05_00_00.1")
			os.Mkdir(first, 0o755)
			os.Symlink(filepath.Base(first), filepath.Join(dir, "..data"))
			os.Symlink(filepath.Join("..data", "vitals.yaml"), filepath.Join(dir, "vitals.yaml"))
			return filepath.Join(dir, "vitals.yaml")
		}, func(t *testing.T, a *agent, text string) {
			dir := filepath.Dir(a.file)
			old, _ := os.Readlink(filepath.Join(dir, "..data"))
			updates++
			next := filepath.Join(dir, fmt.Sprintf("..2026_12_07_05_00_00.%d", updates+1))
			if err := os.Mkdir(next, 0o755); err != nil {
				t.Fatal(err)
			}
			a.writeIn(t, filepath.Join(next, "vitals.yaml"), text)
			if err := os.Symlink(filepath.Base(next), filepath.Join(dir, "..data_tmp")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
				t.Fatal(err)
			}
			os.RemoveAll(filepath.Join(dir, old))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := startAgentWith(t, []string{"--watch"}, func(a *agent) string {
				a.file = tc.layout(t.TempDir())
				return before
			}, "sleep")
			pid := pidIn(t, a.ready)
			c, err := client.New(a.sock, "")
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "a to pass", a.logs, func() bool { return checksNow(t, c)["a"].Status == health.Pass })
			runs := checksNow(t, c)["a"].Runs

			changed := time.Now()
			tc.change(t, a, a.header()+after)
			waitFor(t, "d to appear", a.logs, func() bool { _, ok := checksNow(t, c)["d"]; return ok })
			if took := time.Since(changed); took > 2*time.Second {
				t.Errorf("the change was applied %v after it was made, want within 2s", took)
			}
			if now := checksNow(t, c)["a"].Runs; now < runs {
				t.Errorf("a's runs went from %d to %d: it started over", runs, now)
			}

			// A write that does not load: refused, nothing changed.
			ready := readyz(a.addr)
			tc.change(t, a, a.header()+after+"  e: {http: {url: 5}}\n")
			a.waitEvent(t, "config-rejected", func(e health.Event) bool { return e.Type == health.EventConfigRejected })
			if got := readyz(a.addr); got != ready {
				t.Errorf("/readyz %d after a refused change, %d before", got, ready)
			}
			if now := checksNow(t, c); len(now) != 2 {
				t.Errorf("checks after a refused change: %v, want a and d", now)
			}
			if got := pidIn(t, a.ready); got != pid {
				t.Errorf("the workload is %d, was %d", got, pid)
			}
		})
	}
}

// header is the lines of the agent's file before its checks.
func (a *agent) header() string { return fmt.Sprintf("listen: %s\napi: %s\n", a.addr, a.sock) }

// writeIn writes text to path in place.
func (a *agent) writeIn(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Under wrk's load on /readyz, 100 reloads of a file of 200 checks — each
// retiming a ready check (Update) and replacing a live one (Replace) — fail
// no request and flip no answer of /readyz: the ready checks never stop
// passing. Each reload is a whole file read, judged and compared.
func TestReloadsUnderLoadFailNoRequestAndFlipNoAnswer(t *testing.T) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		testenv.Missing(t, "the load needs wrk: apt-get install wrk")
	}
	file := os.Args[0]
	checks := func(n int) string {
		var b strings.Builder
		b.WriteString("checks:\n")
		fmt.Fprintf(&b, "  r000: {file: {path: %s}, period: %dms}\n", file, 500+n%2*100)
		for i := 1; i < 199; i++ {
			fmt.Fprintf(&b, "  r%03d: {file: {path: %s}, period: 1s}\n", i, file)
		}
		// The live check tests another file each time: it starts over.
		fmt.Fprintf(&b, "  live: {file: {path: %s}, level: live, period: 1s}\n", []string{file, a0(file)}[n%2])
		return b.String()
	}
	a := startAgent(t, func(*agent) string { return checks(0) }, "sleep")
	pidIn(t, a.ready)
	waitReadyzIs(t, a.addr, 200, a.logs)
	c, err := client.New(a.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	load := exec.CommandContext(ctx, wrk, "-t1", "-c4", "-d60s", "http://"+a.addr+"/readyz")
	var out strings.Builder
	load.Stdout = &out
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // wrk under way
	for i := 1; i <= 100; i++ {
		a.rewrite(t, checks(i))
		r, err := c.Reload(context.Background())
		if err != nil || fmt.Sprint(r.Retimed, r.Changed) != "[r000] [live]" {
			t.Fatalf("reload %d: %+v %v", i, r, err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	load.Process.Signal(os.Interrupt) // wrk prints its summary on SIGINT
	load.Wait()
	summary := out.String()
	if !strings.Contains(summary, "requests in") || strings.Contains(summary, "Non-2xx") || strings.Contains(summary, "Socket errors") {
		t.Fatalf("wrk during 100 reloads:\n%s", summary)
	}
	for _, e := range a.events(t, 0) {
		if e.Type == health.EventLevelFailed && e.Level == health.Ready {
			t.Fatalf("readiness failed during the reloads: %+v", e)
		}
	}
	t.Logf("wrk during 100 reloads of 200 checks:\n%s", summary)
}

// a0 is another file that is there: the directory of path.
func a0(path string) string { return filepath.Dir(path) }

// A reloaded file's secrets are hidden as the first file's are: a check
// added by a reload that prints a ${VAR} named like a secret shows it
// masked; and a check added to the one service starts over with it.
func TestAReloadedFilesSecretsAreHiddenAndItsChecksStartOverWithTheService(t *testing.T) {
	const secret = "s3cr3t-t0ken-of-the-reload"
	t.Setenv("RELOAD_API_TOKEN", secret)
	file := os.Args[0]
	first := fmt.Sprintf("checks:\n  a: {file: {path: %s}, period: 25ms}\n", file)
	a := startAgent(t, func(*agent) string { return first }, "sleep")
	pidIn(t, a.ready)
	c, err := client.New(a.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	a.rewrite(t, first+fmt.Sprintf("  d: {file: {path: %s}, period: 25ms}\n", file)+
		"  e: {exec: {command: [sh, -c, 'echo token ${RELOAD_API_TOKEN}; exit 1']}, period: 25ms, level: live}\n")
	if _, err := c.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "e to run", a.logs, func() bool { return checksNow(t, c)["e"].Runs > 0 })
	e, err := c.Check(context.Background(), "e")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range e.History {
		if strings.Contains(r.Output, secret) || !strings.Contains(r.Output, "token xxxxx") {
			t.Fatalf("e's output %q: want the reloaded file's secret masked", r.Output)
		}
	}
	if strings.Contains(a.logs.String(), secret) {
		t.Fatalf("the log shows the secret:\n%s", a.logs)
	}

	waitFor(t, "d to run 40 times", a.logs, func() bool { return checksNow(t, c)["d"].Runs >= 40 })
	if r := a.vitals(t, "restart"); r.code != 0 {
		t.Fatalf("restart: %+v", r)
	}
	a.waitEvent(t, "the workload's start again", func(e health.Event) bool { return e.Type == health.EventServiceStarted && e.Restarts == 1 })
	if runs := checksNow(t, c)["d"].Runs; runs >= 40 {
		t.Fatalf("d has %d runs after the workload restarted: it did not start over with it", runs)
	}
}

// A reload adds, changes and removes the checks bound to more than the
// Monitor: a heartbeat the workload beats through the API (made anew when
// its ttl changes, pending until the next beat; gone once removed, so a
// beat is answered "no such check"), a check of the workload's listening
// port, and a check whose on-failure: restart restarts the workload — and
// stops restarting it once the reload takes its action away.
func TestReloadAppliesTheChecksTheWorkloadFeedsAndActsOn(t *testing.T) {
	file := os.Args[0]
	port := strings.TrimPrefix(freeAddr(t), "127.0.0.1:")
	base := fmt.Sprintf("checks:\n  a: {file: {path: %s}, period: 50ms}\n", file)
	a := startAgent(t, func(*agent) string { return base }, "listen", "127.0.0.1:"+port)
	pidIn(t, a.ready)
	c, err := client.New(a.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	noHB(t, a)

	fed := base + fmt.Sprintf("  port: {listening: {port: %s}, period: 50ms}\n", port)
	a.rewrite(t, fed+"  hb: {heartbeat: {ttl: 1m}}\n")
	a.vitals(t, "reload").expect(t, 0, "reloaded: added port, hb\n", "")
	a.vitals(t, "beat", "hb").expect(t, 0, "", "")
	waitFor(t, "hb and port to pass", a.logs, func() bool {
		now := checksNow(t, c)
		return now["hb"].Status == health.Pass && now["port"].Status == health.Pass
	})

	a.rewrite(t, fed+"  hb: {heartbeat: {ttl: 2m}}\n")
	a.vitals(t, "reload").expect(t, 0, "reloaded: changed hb\n", "")
	if hb := checksNow(t, c)["hb"]; hb.Status != health.Pending {
		t.Errorf("hb after its ttl changed: %+v, want it made anew, pending", hb)
	}
	a.vitals(t, "beat", "hb").expect(t, 0, "", "")
	waitFor(t, "hb to pass again", a.logs, func() bool { return checksNow(t, c)["hb"].Status == health.Pass })

	a.rewrite(t, fed+fmt.Sprintf("  gone: {file: {path: %s/nowhere}, period: 50ms, on-failure: restart}\n", file))
	a.vitals(t, "reload").expect(t, 0, "reloaded: added gone; removed hb\n", "")
	noHB(t, a)
	a.waitEvent(t, "gone to restart the workload", func(e health.Event) bool {
		return e.Type == health.EventServiceStarted && e.Restarts >= 1
	})

	a.rewrite(t, fed+fmt.Sprintf("  gone: {file: {path: %s/nowhere}, period: 50ms}\n", file))
	a.vitals(t, "reload").expect(t, 0, "reloaded: changed gone\n", "")
	// Once gone has failed again, no restart it asked for is under way.
	waitFor(t, "gone to fail with no action", a.logs, func() bool { return checksNow(t, c)["gone"].Status == health.Fail })
	evs := a.events(t, 0)
	last := evs[len(evs)-1].ID
	runs := checksNow(t, c)["gone"].Runs
	waitFor(t, "gone to fail on", a.logs, func() bool { return checksNow(t, c)["gone"].Runs > runs+20 })
	for _, e := range a.events(t, last) {
		if e.Type == health.EventServiceStarted || e.Type == health.EventServiceExited {
			t.Errorf("after the reload took gone's action away: %+v", e)
		}
	}
}

// noHB says that the agent has no check hb to beat.
func noHB(t *testing.T, a *agent) {
	t.Helper()
	if r := a.vitals(t, "beat", "hb"); r.code != 2 || !strings.Contains(r.stderr, `no such check "hb"`) {
		t.Fatalf("vitals beat hb: exit %d, %q; want 2, no such check", r.code, r.stderr)
	}
}

// A reload restarts a service whose environment changed, and that one
// alone: another whose restart policy changed runs on, the same process.
// A hook the reload adds hears of the reload itself and of the restart. A
// service removed is refused, saying why, and nothing changes.
func TestReloadRestartsTheServiceItChangesAndAddsAHook(t *testing.T) {
	heard := filepath.Join(t.TempDir(), "heard")
	var services string
	a := startServices(t, func(a *agent) string {
		services = fmt.Sprintf("services:\n  web: {command: %s, env: {COLOR: blue}}\n  db: {command: %s}\n",
			a.workload("web", "sleep"), a.workload("db", "sleep"))
		return services + "checks:\n  a: {file: {path: " + os.Args[0] + "}}\n"
	})
	web, db := pidIn(t, a.readyOf("web")), pidIn(t, a.readyOf("db"))
	os.Remove(a.readyOf("web"))

	next := strings.Replace(services, "COLOR: blue", "COLOR: green", 1)
	next = strings.Replace(next, "  db: {command: "+a.workload("db", "sleep")+"}", "  db: {command: "+a.workload("db", "sleep")+", restart: always}", 1)
	hook := fmt.Sprintf("hooks:\n  - name: heard\n    on: [config-reloaded, service-started]\n    exec: {command: [sh, -c, 'cat >> %s; echo >> %s']}\n", heard, heard)
	a.rewrite(t, next+hook+"checks:\n  a: {file: {path: "+os.Args[0]+"}}\n")
	a.vitals(t, "reload").expect(t, 0, "reloaded: applied hooks, services; restarted web\n", "")
	if now := pidIn(t, a.readyOf("web")); now == web {
		t.Errorf("web is still %d after its environment changed", now)
	}
	if now := pidIn(t, a.readyOf("db")); now != db {
		t.Errorf("db is %d after its policy alone changed, was %d", now, db)
	}
	waitFor(t, "the hook to hear of the reload and of web's start", a.logs, func() bool {
		b, _ := os.ReadFile(heard)
		return strings.Contains(string(b), `"type":"config-reloaded"`) && strings.Contains(string(b), `"type":"service-started"`) &&
			strings.Contains(string(b), `"service":"web"`)
	})

	a.rewrite(t, strings.Split(next, "  db:")[0]+"checks:\n  a: {file: {path: "+os.Args[0]+"}}\n")
	r := a.vitals(t, "reload")
	if r.code != 2 || !strings.Contains(r.stderr, "services: changed: a reload does not add or remove a service (removed db)") {
		t.Fatalf("a service removed: exit %d, %q", r.code, r.stderr)
	}
	if now := pidIn(t, a.readyOf("db")); now != db {
		t.Errorf("db is %d after a refused reload, was %d", now, db)
	}
}

// A log check comes, is retimed and goes with a reload: added, it reads
// the service's lines from then on (here the next run's "Listening on");
// retimed, what it saw stands; removed, it is gone.
func TestReloadAddsRetimesAndRemovesALogCheck(t *testing.T) {
	file := os.Args[0]
	base := fmt.Sprintf("checks:\n  a: {file: {path: %s}, period: 50ms}\n", file)
	a := startAgent(t, func(*agent) string { return base }, "serve", freeAddr(t))
	pidIn(t, a.ready)
	c, err := client.New(a.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	a.rewrite(t, base+"  up: {log: {pattern: Listening on}, period: 100ms}\n")
	a.vitals(t, "reload").expect(t, 0, "reloaded: added up\n", "")
	a.vitals(t, "restart").expect(t, 0, "", "")
	waitFor(t, "up to see the next run's line", a.logs, func() bool { return checksNow(t, c)["up"].Status == health.Pass })

	a.rewrite(t, base+"  up: {log: {pattern: Listening on}, period: 200ms}\n")
	a.vitals(t, "reload").expect(t, 0, "reloaded: retimed up\n", "")
	runs := checksNow(t, c)["up"].Runs
	waitFor(t, "up to run again", a.logs, func() bool { return checksNow(t, c)["up"].Runs > runs })
	if up := checksNow(t, c)["up"]; up.Status != health.Pass {
		t.Errorf("up after it was retimed: %+v, want it passing on what it saw", up)
	}

	a.rewrite(t, base)
	a.vitals(t, "reload").expect(t, 0, "reloaded: removed up\n", "")
	if _, ok := checksNow(t, c)["up"]; ok {
		t.Error("up is still there")
	}
}

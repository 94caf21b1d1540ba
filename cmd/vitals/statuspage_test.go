package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps/depstest"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/testenv"
)

// The status page's tests open it in a real browser, headless Chromium from
// Debian (apt-get install chromium), driven by chromedp, against the agent
// as users run it. They wait on the page's DOM with a generous guard; the
// one bound they assert is the page's own promise, that a check's change
// shows within a second of the event that says it changed.

// pageGuard bounds each wait on the page: a guard only, far above what any
// wait takes.
const pageGuard = 30 * time.Second

// shownWithin is how soon after the agent's event a check's change is on
// the open page.
const shownWithin = time.Second

// statusPage is the status page of an agent, open in a tab of Chromium.
type statusPage struct {
	t     *testing.T
	ctx   context.Context
	shots string // where its screenshots go: a directory of the test's

	mu       sync.Mutex
	problems []string // uncaught exceptions, and what the Content-Security-Policy refused
}

// openStatusPage opens url in headless Chromium at a desktop's width; it
// skips, or fails under CI, when Chromium is not installed.
func openStatusPage(t *testing.T, url string) *statusPage {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Missing(t, "the status page's browser tests need Chromium: apt-get install chromium (%v)", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1280, 900),
		chromedp.NoSandbox, // root, in a container
		chromedp.UserDataDir(t.TempDir()))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a guard for the whole test
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(ctx)
	t.Cleanup(cancelTab)
	p := &statusPage{t: t, ctx: ctx, shots: filepath.Join(t.TempDir(), "screenshots")}
	console := chromedp.Console(ctx) // from the tab's first message
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.IsException() || strings.Contains(m.Text, "Content Security Policy") {
				p.mu.Lock()
				p.problems = append(p.problems, m.String())
				p.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, m := range p.problems {
			t.Errorf("the page said: %s", m)
		}
	})
	p.do(chromedp.Navigate(url))
	p.waitFor("the page to be live", `document.getElementById("connection").dataset.state === "live"`)
	return p
}

func (p *statusPage) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatalf("chromedp: %v", err)
	}
}

// eval evaluates expr in the page.
func eval[T any](p *statusPage, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor waits (a guard only) until expr is true on the page.
func (p *statusPage) waitFor(what, expr string) {
	p.t.Helper()
	_, err := chromedp.Run(p.ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(pageGuard)))
	if err != nil {
		body, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.querySelector("main").innerText`))
		p.t.Fatalf("%s: not within %v (%v); the page shows:\n%s", what, pageGuard, err, body)
	}
}

// row is the selector of a check's row.
func row(check string) string {
	return fmt.Sprintf(`document.querySelector('tr[data-check=%q]')`, check)
}

// statusOf is the status a check's row shows, as its text says it.
func statusOf(p *statusPage, check string) string {
	p.t.Helper()
	return eval[string](p, row(check)+`.querySelector(".status .word").textContent`)
}

// shot is what a screenshot shows of the page.
type shot int

const (
	wholePage   shot = iota // the whole page, at a desktop's width
	desktopView             // what a desktop's window shows: the README's opening
	phoneView               // what a phone's screen shows, as a phone lays it out
)

// screenshot saves the page as name.png at width by height, in a
// directory of the test's. With VITALS_UPDATE_SCREENSHOTS=1 it is copied
// into docs/images too.
func (p *statusPage) screenshot(name string, width, height int64, what shot) {
	p.t.Helper()
	opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
	take := chromedp.CaptureScreenshot()
	switch what {
	case wholePage:
		take = chromedp.FullScreenshot(100) // 100: a PNG
	case phoneView:
		opts = append(opts, chromedp.EmulateMobile)
	}
	p.do(chromedp.EmulateViewport(width, height, opts...))
	png, err := chromedp.Run(p.ctx, take)
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	p.do(chromedp.EmulateReset())
	file := filepath.Join(p.shots, name+".png")
	if err := os.MkdirAll(p.shots, 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot %s (%dx%d)", file, width, height)
	if os.Getenv("VITALS_UPDATE_SCREENSHOTS") == "1" {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "images", name+".png"), png, 0o644); err != nil {
			p.t.Fatal(err)
		}
	}
}

// The page lists every check with its status, in words as well as colour,
// the levels and the workload; a check that the test breaks and mends turns
// from pass to fail and back on the open page, each within a second of the
// agent's event and without a reload, with the event in the log; the Tab
// key reaches every mark of every check's history, and each shows its
// result.
func TestTheStatusPageShowsTheChecksAndFollowsThemLive(t *testing.T) {
	var flag string
	missing := filepath.Join(vitalstest.ShortDir(t), "peer1.conf") // a short path for the screenshots
	a := startAgent(t, func(a *agent) string {
		flag = filepath.Join(a.dir, "flag")
		os.WriteFile(flag, []byte("up"), 0o600)
		return fmt.Sprintf(`checks:
  boot:
    level: startup
    file: {path: %[1]s}
  flip:
    file: {path: %[1]s}
    period: 100ms
    failure-threshold: 1
  gone:
    file: {path: %[2]s}
    period: 1h
    failure-threshold: 1
  beat:
    level: live
    heartbeat: {ttl: 1h}
  queue:
    level: live
    heartbeat: {ttl: 1h}
`, flag, missing)
	}, "sleep")
	pid := pidIn(t, a.ready)
	a.vitals(t, "beat", "queue", "--status", "warn", "--output", "queue 80% full").expect(t, 0, "", "")
	p := openStatusPage(t, "http://"+a.addr+"/")

	p.waitFor("every check with its status", row("queue")+`?.dataset.status === "warn" && `+row("gone")+`?.dataset.status === "fail"`)
	for check, want := range map[string]string{"boot": "pass", "flip": "pass", "gone": "fail", "beat": "pending", "queue": "warn"} {
		if got := statusOf(p, check); got != want {
			t.Errorf("%s shows %q, want %q", check, got, want)
		}
	}
	if got := eval[[]string](p, `Array.from(document.querySelectorAll("#check-rows tr")).map(r => r.dataset.check)`); !slices.Equal(got, []string{"boot", "flip", "gone", "beat", "queue"}) {
		t.Errorf("rows %v, want every check in the file's order", got)
	}
	if got := eval[string](p, `Array.from(document.querySelectorAll("#levels li")).map(l => l.dataset.level + " " + l.querySelector(".word").textContent).join(", ")`); got != "startup pass, live pass, ready fail" {
		t.Errorf("levels %q", got)
	}
	if got := eval[string](p, row("gone")+`.querySelector(".col-output").textContent`); !strings.Contains(got, "no such file or directory") {
		t.Errorf("gone's last output %q", got)
	}
	if got := eval[string](p, row("queue")+`.querySelector(".col-output").textContent`); got != "queue 80% full" {
		t.Errorf("queue's last output %q", got)
	}
	if got := eval[string](p, `document.getElementById("services-heading").textContent + ": " + `+
		`Array.from(document.querySelectorAll('#services dd[data-field="pid"]')).map(d => d.textContent).join()`); got != fmt.Sprintf("Workload: %d", pid) {
		t.Errorf("the one service shows as %q, want the Workload with pid %d", got, pid)
	}
	// The summary: how many pass, and which do not, with why.
	p.waitFor("the summary", `document.getElementById("summary").dataset.state === "fail"`)
	if got, want := eval[string](p, `document.getElementById("summary").textContent`),
		"3 of 5 checks pass; 1 failing: gone (stat "+missing+": no such file or directory); 1 warning: queue (queue 80% full); 1 pending: beat"; got != want {
		t.Errorf("the summary says %q, want %q", got, want)
	}
	// Flip's history over its time axis: its marks placed left to right in
	// their time's order within the strip, the span written under it.
	p.waitFor("flip's marks", row("flip")+`.querySelectorAll(".mark").length >= 5`)
	type axis struct {
		Span, Start     string
		Lefts           []float64
		StripL, StripR  float64
		Hour, Kept      string
		ScaleMin, Max   string
		Reasons, Counts []string
	}
	ax := eval[axis](p, `(() => {
		const r = `+row("flip")+`, strip = r.querySelector(".history").getBoundingClientRect();
		return {span: r.querySelector(".axis-span").textContent, start: r.querySelector(".axis-start").textContent,
			lefts: Array.from(r.querySelectorAll(".mark")).map(m => m.getBoundingClientRect().left),
			stripL: strip.left, stripR: strip.right,
			hour: r.querySelector('.uptime dd[data-window="hour"]').textContent, kept: r.querySelector('.uptime dd[data-window="kept"]').textContent,
			scaleMin: r.querySelector(".scale-min").textContent, max: r.querySelector(".scale-max").textContent,
			reasons: Array.from(`+row("gone")+`.querySelectorAll(".reasons .reason-text")).map(e => e.textContent),
			counts: Array.from(`+row("gone")+`.querySelectorAll(".reasons li")).map(e => e.dataset.count)};
	})()`)
	if !regexp.MustCompile(`^last \d+ s$`).MatchString(ax.Span) || !regexp.MustCompile(`^\d\d:\d\d:\d\d$`).MatchString(ax.Start) {
		t.Errorf("flip's axis says %q from %q: want its span (last N s) from a time", ax.Span, ax.Start)
	}
	if !slices.IsSorted(ax.Lefts) || ax.Lefts[0] < ax.StripL || ax.Lefts[len(ax.Lefts)-1] >= ax.StripR || ax.Lefts[len(ax.Lefts)-1]-ax.Lefts[0] < (ax.StripR-ax.StripL)/2 {
		t.Errorf("flip's marks at %v: want them in time order across the strip [%v, %v]", ax.Lefts, ax.StripL, ax.StripR)
	}
	if ax.Hour != "100%" || ax.Kept != "100%" || !strings.HasSuffix(ax.ScaleMin, "ms") || !strings.HasSuffix(ax.Max, "ms") {
		t.Errorf("flip's uptime %q (hour), %q (kept), latency from %q to %q", ax.Hour, ax.Kept, ax.ScaleMin, ax.Max)
	}
	if len(ax.Reasons) != 1 || !strings.Contains(ax.Reasons[0], "no such file or directory") || !slices.Equal(ax.Counts, []string{"1"}) {
		t.Errorf("gone's reasons %q, counts %v: want its one reason once", ax.Reasons, ax.Counts)
	}
	// The badges, as a README would embed them.
	for path, want := range map[string]string{"/ui/badge/gone.svg": "gone: fail #c7130a", "/ui/badge/queue.svg": "queue: warn #ccb311",
		"/ui/badge/flip.svg": "flip: pass #40cc11", "/ui/badge/beat.svg": "beat: pending #9f9f9f", "/ui/badge/level/ready.svg": "ready: fail #c7130a"} {
		if got := badgeOf(t, "http://"+a.addr+path); got != want {
			t.Errorf("GET %s: %q, want %q", path, got, want)
		}
	}
	p.screenshot("status-page", 1280, 800, wholePage)
	p.screenshot("status-page-phone", 390, 844, phoneView)

	// Flip: the page follows without a reload.
	eval[bool](p, `window.notReloaded = true`)
	last := a.events(t, 0)
	after := last[len(last)-1].ID
	for _, step := range []struct {
		change func()
		event  health.EventType
		status string
	}{
		{func() { os.Remove(flag) }, health.EventCheckFailed, "fail"},
		{func() { os.WriteFile(flag, []byte("up"), 0o600) }, health.EventCheckPassed, "pass"},
	} {
		step.change()
		evs := a.waitEvent(t, "flip "+step.status, func(e health.Event) bool { return e.ID > after && e.Type == step.event && e.Check == "flip" })
		e := evs[len(evs)-1]
		after = e.ID
		p.waitFor("flip to show "+step.status, row("flip")+`.dataset.status === "`+step.status+`"`)
		changed := eval[int64](p, `+`+row("flip")+`.dataset.changedAt`)
		lag := time.UnixMilli(changed).Sub(e.Time)
		if lag > shownWithin {
			t.Errorf("flip showed %s %v after the agent's event %d said so; want within %v", step.status, lag, e.ID, shownWithin)
		}
		t.Logf("flip showed %s %v after the agent's event", step.status, lag)
		if got := statusOf(p, "flip"); got != step.status {
			t.Errorf("flip shows %q, want %q", got, step.status)
		}
		p.waitFor(fmt.Sprintf("event %d in the log", e.ID), fmt.Sprintf(`document.querySelector('#events li[data-id="%d"][data-type=%q]')?.textContent.includes("flip")`, e.ID, e.Type))
	}
	if !eval[bool](p, `window.notReloaded === true`) {
		t.Error("the page was reloaded")
	}
	if first := eval[string](p, `document.querySelector("#events li").dataset.id`); first != fmt.Sprint(after) {
		t.Errorf("the newest event in the log is %s, want %d first", first, after)
	}

	// The keyboard: with flip stopped, every history stands still.
	a.vitals(t, "stop", "flip").expect(t, 0, "stopped flip", "")
	p.waitFor("flip to show stopped", row("flip")+`.dataset.status === "stopped"`)
	marks := eval[[]string](p, `Array.from(document.querySelectorAll(".mark")).map(m => m.closest("tr").dataset.check + " " + m.dataset.key)`)
	if len(marks) < 5 {
		t.Fatalf("%d marks: %v", len(marks), marks)
	}
	type focused struct {
		Mark, Shown bool
		Key, Text   string
	}
	reached := map[string]bool{}
	p.do(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
	for range len(marks) + 40 {
		p.do(chromedp.KeyEvent(kb.Tab))
		f := eval[focused](p, `(() => {
			const a = document.activeElement;
			if (!a || !a.classList.contains("mark")) return {mark: false};
			const tr = a.closest("tr");
			return {mark: true, key: tr.dataset.check + " " + a.dataset.key, text: a.dataset.text,
				shown: tr.querySelector(".mark-detail").textContent === a.dataset.text && a.getBoundingClientRect().width > 0};
		})()`)
		if !f.Mark {
			continue
		}
		reached[f.Key] = true
		if !f.Shown {
			t.Errorf("%s has the focus, but its result %q is not shown", f.Key, f.Text)
		}
		if strings.HasPrefix(f.Key, "gone ") && (!strings.Contains(f.Text, " · fail · ") || !strings.Contains(f.Text, "no such file or directory")) {
			t.Errorf("gone's mark shows %q: want its time, fail and its output", f.Text)
		}
	}
	t.Logf("the Tab key reached %d marks of %d", len(reached), len(marks))
	for _, m := range marks {
		if !reached[m] {
			t.Errorf("the Tab key never reached the mark %s", m)
		}
	}
	// The pointer shows a result as the focus does.
	x := eval[[]float64](p, `(() => { const r = `+row("boot")+`.querySelector(".mark").getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)
	p.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x[0], x[1]))
	p.waitFor("boot's result under the pointer", row("boot")+`.querySelector(".mark-detail").textContent.includes(" · pass · ")`)
}

// badgeOf reads the badge at url, as XML: its title and its status's
// colour ("db: fail #c7130a").
func badgeOf(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/svg+xml" {
		t.Fatalf("GET %s: %s, %q", url, res.Status, res.Header.Get("Content-Type"))
	}
	var svg struct {
		Title string `xml:"title"`
		Rects []struct {
			Fill string `xml:"fill,attr"`
		} `xml:"g>rect"`
	}
	if err := xml.NewDecoder(res.Body).Decode(&svg); err != nil {
		t.Fatalf("GET %s: not an SVG document: %v", url, err)
	}
	if len(svg.Rects) < 2 {
		return svg.Title
	}
	return svg.Title + " " + svg.Rects[1].Fill
}

// With details: false, no output reaches the page: not the checks' last
// outputs, nor their histories, nor the events, nor a notice's data.
func TestTheStatusPageShowsNoOutputWithoutDetails(t *testing.T) {
	var flag, missing string
	a := startAgent(t, func(a *agent) string {
		flag, missing = filepath.Join(a.dir, "flag-file-of-the-test"), filepath.Join(a.dir, "never-made-file-of-the-test")
		os.WriteFile(flag, []byte("up"), 0o600)
		return fmt.Sprintf(`details: false
checks:
  flip:
    file: {path: %s}
    period: 100ms
    failure-threshold: 1
  gone:
    file: {path: %s}
    period: 1h
    failure-threshold: 1
  queue:
    level: live
    heartbeat: {ttl: 1h}
`, flag, missing)
	}, "sleep")
	pidIn(t, a.ready)
	a.vitals(t, "beat", "queue", "--status", "warn", "--output", "the-beat-output-of-the-test").expect(t, 0, "", "")
	a.vitals(t, "notify", "example.com/reloaded", "secret=the-notice-data-of-the-test").expect(t, 0, "", "")
	os.Remove(flag)
	a.waitEvent(t, "flip fails", func(e health.Event) bool { return e.Type == health.EventCheckFailed && e.Check == "flip" })
	os.WriteFile(flag, []byte("up"), 0o600)
	a.waitEvent(t, "flip passes again", func(e health.Event) bool {
		return e.Type == health.EventCheckPassed && e.Check == "flip" && e.From == health.Fail
	})
	p := openStatusPage(t, "http://"+a.addr+"/")
	p.waitFor("the checks, and the events up to flip's mending", row("queue")+`?.dataset.status === "warn" && `+row("gone")+`?.dataset.status === "fail" && `+
		`document.querySelectorAll('#events li[data-type="check-passed"]').length >= 2 && document.querySelector('#events li[data-type="notice"]')`)
	p.waitFor("the marks of flip's results", row("flip")+`.querySelectorAll(".mark.fail").length > 0`)
	html := eval[string](p, `document.documentElement.outerHTML`)
	for _, output := range []string{"flag-file-of-the-test", "never-made-file-of-the-test", "no such file or directory", "bytes, modified",
		"the-beat-output-of-the-test", "the-notice-data-of-the-test"} {
		if strings.Contains(html, output) {
			t.Errorf("the page shows the output %q", output)
		}
	}
	if !eval[bool](p, `!document.getElementById("withheld").hidden`) || !strings.Contains(html, "withheld") {
		t.Error("the page does not say that outputs are withheld")
	}
}

// The agent stops, and the page says it lost the connection; it starts
// again on the same address, and the page says it is back, with the new
// agent's state and events.
func TestTheStatusPageSaysWhenItLosesTheAgentAndRecovers(t *testing.T) {
	var flag string
	a := startAgent(t, func(a *agent) string {
		flag = filepath.Join(a.dir, "flag")
		os.WriteFile(flag, []byte("up"), 0o600)
		return fmt.Sprintf("checks:\n  up:\n    file: {path: %s}\n    period: 100ms\n    failure-threshold: 1\n", flag)
	}, "sleep")
	first := pidIn(t, a.ready)
	p := openStatusPage(t, "http://"+a.addr+"/")
	p.waitFor("the first workload's pid", fmt.Sprintf(`document.querySelector('#services dd[data-field="pid"]')?.textContent === "%d"`, first))
	os.Remove(flag)
	p.waitFor("up to fail", row("up")+`.dataset.status === "fail"`)

	a.cmd.Process.Signal(syscall.SIGTERM)
	exited(t, a.cmd)
	p.waitFor("the page to say it lost the connection", `document.getElementById("connection").dataset.state === "lost" && `+
		`document.getElementById("connection").textContent.includes("Connection lost")`)
	p.waitFor("the stopping event in the log, and its banner", `document.querySelector('#events li[data-type="stopping"]') && !document.getElementById("banner").hidden`)

	// The same agent again, on the same address, its check passing.
	os.WriteFile(flag, []byte("up"), 0o600)
	os.Remove(a.ready)
	again := exec.Command(a.cmd.Path, a.cmd.Args[1:]...)
	again.Env, again.Stderr, again.Stdout, again.WaitDelay = a.cmd.Env, a.logs, a.stdout, a.cmd.WaitDelay
	if err := again.Start(); err != nil {
		t.Fatal(err)
	}
	a.cmd = again // startAgent's cleanup stops it
	second := pidIn(t, a.ready)
	p.waitFor("the page to say it is back", `document.getElementById("connection").dataset.state === "reconnected" && `+
		`document.getElementById("connection").textContent.includes("reconnected")`)
	p.waitFor("the second workload's pid", fmt.Sprintf(`document.querySelector('#services dd[data-field="pid"]')?.textContent === "%d"`, second))
	p.waitFor("up to pass, as the new agent says", row("up")+`.dataset.status === "pass"`)
	p.waitFor("the new agent's events alone", fmt.Sprintf(`Array.from(document.querySelectorAll('#events li[data-type="service-started"]')).map(l => l.textContent.includes("pid %d")).join() === "true"`, second))
	if !eval[bool](p, `document.getElementById("banner").hidden`) {
		t.Error("the page still says that vitals is stopping")
	}
}

// With history.file, a restart of vitals keeps the histories: the page of
// the new agent shows the results of the old one, over its axis.
func TestTheStatusPageKeepsTheHistoryAcrossARestartWithHistoryFile(t *testing.T) {
	var saved string
	a := startAgent(t, func(a *agent) string {
		saved = filepath.Join(a.dir, "history.json")
		return fmt.Sprintf("history: {file: %s}\nchecks:\n  up:\n    file: {path: %s}\n    period: 500ms\n", saved, os.Args[0])
	}, "sleep")
	pidIn(t, a.ready)
	p := openStatusPage(t, "http://"+a.addr+"/")
	p.waitFor("four results of up", row("up")+`.querySelectorAll(".mark").length >= 4`)
	firstKeys := `Array.from(` + row("up") + `.querySelectorAll(".mark")).slice(0, 4).map(m => m.dataset.key).join()`
	before := eval[string](p, firstKeys)

	a.cmd.Process.Signal(syscall.SIGTERM)
	exited(t, a.cmd)
	if st, err := os.Stat(saved); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("history.file after the stop: %v, %v; want it, 0600", st, err)
	}
	os.Remove(a.ready)
	again := exec.Command(a.cmd.Path, a.cmd.Args[1:]...)
	again.Env, again.Stderr, again.Stdout, again.WaitDelay = a.cmd.Env, a.logs, a.stdout, a.cmd.WaitDelay
	if err := again.Start(); err != nil {
		t.Fatal(err)
	}
	a.cmd = again // startAgent's cleanup stops it
	pidIn(t, a.ready)
	p.waitFor("the page to say it is back", `document.getElementById("connection").dataset.state === "reconnected"`)
	p.waitFor("up to pass on the new agent", row("up")+`.dataset.status === "pass"`)
	if got := eval[string](p, firstKeys); got != before {
		t.Errorf("up's oldest results after the restart are %s, want the old agent's %s", got, before)
	}
	if span := eval[string](p, row("up")+`.querySelector(".axis-span").textContent`); !strings.HasPrefix(span, "last ") {
		t.Errorf("up's axis says %q", span)
	}
}

// The page is on by default; ui: false turns it off, and its paths are
// the probe listener's 404s again, while the probe endpoints answer as
// they do.
func TestUIFalseTurnsTheStatusPageOff(t *testing.T) {
	for _, tc := range []struct {
		file string
		want int
	}{
		{"", http.StatusOK},
		{"ui: false\n", http.StatusNotFound},
	} {
		a := startAgent(t, func(a *agent) string {
			return fmt.Sprintf("%schecks:\n  up:\n    file: {path: %s}\n", tc.file, os.Args[0])
		}, "sleep")
		waitReadyzIs(t, a.addr, http.StatusOK, a.logs)
		pidIn(t, a.ready) // the cleanup kills the workload whose pid the file holds
		for _, path := range []string{"/", "/ui/app.js", "/ui/api/status", "/ui/api/events"} {
			res, err := http.Get("http://" + a.addr + path)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Errorf("%qGET %s: %s, want %d", tc.file, path, res.Status, tc.want)
			}
		}
	}
}

// The StackStorm example mid-story, as the README opens with it: its
// vitals.yaml as users run it (examples/stackstorm/run.sh), against a
// RabbitMQ of its own. The rules engine has been ready for a few seconds
// when it loses its broker connection: the page shows readiness failing,
// with the line that says so and the connection that is gone as its
// reasons, after the passes before.
func TestTheStatusPageShowsTheStackStormExampleLosingItsBroker(t *testing.T) {
	needRabbitMQAndPika(t)
	mq := depstest.AMQP.Private(t)
	// The example logs in as guest, RabbitMQ's default user, which a test
	// broker (whose user is vitals) does not have.
	for _, args := range [][]string{{"add_user", "guest", "guest"}, {"set_permissions", "guest", ".*", ".*", ".*"}} {
		if _, err := mq.Ctl(args...); err != nil {
			t.Fatal(err)
		}
	}
	_, port, _ := net.SplitHostPort(mq.Addr)
	// $STACKSTORM_DIR holds the API socket, and the files that break the
	// rules engine; the addresses are vitals.yaml's.
	dir := vitalstest.ShortDir(t)
	a := &agent{addr: "127.0.0.1:18559", sock: filepath.Join(dir, "vitals.sock"), dir: dir,
		logs: &vitalstest.Buffer{}, stdout: &vitalstest.Buffer{}}
	a.cmd = exec.Command(vitals, "run", "-c", "examples/stackstorm/vitals.yaml")
	a.cmd.Dir = filepath.Join("..", "..") // its paths are the repository's
	a.cmd.Env = append(os.Environ(), "STACKSTORM_DIR="+dir, "STACKSTORM_MQ_PORT="+port)
	a.cmd.Stderr, a.cmd.Stdout = a.logs, a.stdout
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Stopped as a user stops it, so that it stops the rules engine.
		a.cmd.Process.Signal(syscall.SIGCONT)
		a.cmd.Process.Signal(syscall.SIGTERM)
		exited(t, a.cmd)
	})
	waitFor(t, "its API socket", a.logs, func() bool { _, err := os.Stat(a.sock); return err == nil })
	a.waitEvent(t, "readiness passes", func(e health.Event) bool { return e.Type == health.EventLevelPassed && e.Level == health.Ready })

	p := openStatusPage(t, "http://"+a.addr+"/")
	ready := `document.querySelector('#levels li[data-level="ready"] .word').textContent`
	p.waitFor("readiness passing for a few seconds", ready+` === "pass" && `+row("pong")+`.querySelectorAll(".mark.pass").length >= 4`)
	if err := os.WriteFile(filepath.Join(dir, "mq-lost"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// vitals is held still while the page is read and its shots taken: its
	// log check passes again 2s after the line, and the shots are of this
	// moment, not of the next. The page is read once it agrees with itself:
	// the rows follow the events, the summary and the levels the status read
	// after them.
	settled := `(() => {
		const s = document.getElementById("summary").textContent, rows = [...document.querySelectorAll("#check-rows tr")];
		const ok = rows.filter(r => r.dataset.status === "pass" || r.dataset.status === "warn").length;
		return s.startsWith(ok + " of " + rows.length + " checks pass") && rows.every(r => r.dataset.status === "pass" || s.includes(r.dataset.check));
	})()`
	// The moment: both failing with the reasons of a lost connection (once
	// the engine has connected again, mq-connected fails only until the
	// new connection has held), readiness failing with them, and the page
	// agreeing with itself. Asked again once vitals is held still: an
	// event may have come before the stop.
	reasons := map[string]string{"mq-errors": `line matching "connection to MQ lost"`, "mq-connected": "no connection to " + mq.Addr}
	moment := ready + ` === "fail" && ` + settled
	for check, want := range reasons {
		quoted, _ := json.Marshal(want)
		inSummary, _ := json.Marshal(check + " (" + want)
		moment += " && " + row(check) + `.dataset.status === "fail" && ` + row(check) + `.querySelector(".col-output").textContent.includes(` + string(quoted) + ")" +
			` && document.getElementById("summary").textContent.includes(` + string(inSummary) + ")"
	}
	for {
		p.waitFor("mq-errors and mq-connected failing for a lost connection, and readiness with them", moment)
		a.cmd.Process.Signal(syscall.SIGSTOP)
		if eval[bool](p, moment) {
			break
		}
		a.cmd.Process.Signal(syscall.SIGCONT)
	}
	for check, want := range reasons {
		if got := statusOf(p, check); got != "fail" {
			t.Errorf("%s shows %q, want fail", check, got)
		}
		if got := eval[string](p, row(check)+`.querySelector(".col-output").textContent`); !strings.Contains(got, want) {
			t.Errorf("%s's reason %q, want %q in it", check, got, want)
		}
		if got := eval[string](p, `document.getElementById("summary").textContent`); !strings.Contains(got, check+" ("+want) {
			t.Errorf("the summary says %q, without %s's reason", got, check)
		}
	}
	if got := eval[string](p, ready); got != "fail" {
		t.Errorf("the ready level shows %q, want fail", got)
	}
	if n := eval[int](p, row("mq-errors")+`.querySelectorAll(".mark.pass").length`); n < 4 {
		t.Errorf("mq-errors shows %d passes, want those before the line", n)
	}
	p.screenshot("stackstorm", 1280, 900, desktopView)
	p.screenshot("stackstorm-phone", 390, 844, phoneView)
	a.cmd.Process.Signal(syscall.SIGCONT)
}

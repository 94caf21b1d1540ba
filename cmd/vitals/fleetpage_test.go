package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
)

// The fleet's page, open in headless Chromium (as the status page's tests
// open it: openStatusPage) against vitals fleet over the real API server.

// fleetRow is the selector of a pod's row.
func fleetRow(name string) string {
	return fmt.Sprintf(`document.querySelector('#rows tr[data-pod$="/%s"]')`, name)
}

// shownAfter waits until expr is true on the page, and says how long after
// since it was.
func (p *statusPage) shownAfter(what, expr string, since time.Time) time.Duration {
	p.t.Helper()
	p.waitFor(what, expr)
	return time.Since(since)
}

func TestFleetPageShowsThePodsAndFollowsTheClusterLive(t *testing.T) {
	f := newKubeFleet(t)
	f.shop(t)
	url := f.startFleet(t)
	p := openStatusPage(t, url+"/")
	p.waitFor("every pod's row", `document.querySelectorAll("#rows tr.pod").length === 4`)
	eval[bool](p, `window.notReloaded = true`)
	if got, want := eval[string](p, `document.getElementById("summary").textContent`),
		fmt.Sprintf("2 of 4 ready; 1 failing: %s/web-b; 1 without a vitals condition", f.ns); got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if got := eval[string](p, fleetRow("web-b")+`.dataset.status`); got != "failing" {
		t.Errorf("web-b shows %q", got)
	}

	f.condition(t, "web-a", corev1.ConditionFalse)
	if d := p.shownAfter("web-a failing", fleetRow("web-a")+`.dataset.status === "failing"`, time.Now()); d > shownWithin {
		t.Errorf("the flip shows %v after it was written, want within %v", d, shownWithin)
	}
	p.waitFor("the summary counting it", `document.getElementById("summary").dataset.failing === "2"`)

	f.event(t, "web-a", "vitals", corev1.EventTypeWarning, "CheckFailed", `Readiness check "db" failed: timed out after 1s`, 1)
	if d := p.shownAfter("web-a's new Event", fleetRow("web-a")+`.querySelector('.events li[data-reason="CheckFailed"]') !== null`, time.Now()); d > shownWithin {
		t.Errorf("the new Event shows %v after it was written, want within %v", d, shownWithin)
	}
	if first := eval[string](p, fleetRow("web-a")+`.querySelector(".events li").dataset.reason`); first != "CheckFailed" {
		t.Errorf("web-a's newest Event is %s, want CheckFailed first", first)
	}
	// The shots: every pod, the failing ones' Events unfolded as their
	// reader would; on a phone, the failing pods alone (below).
	eval[bool](p, `(() => { document.querySelectorAll('#rows tr[data-status="failing"] .events-cell details').forEach(d => d.open = true); return true })()`)
	p.screenshot("fleet", 1280, 800, wholePage)

	// Filters: by status, then by label, each as the summary counts them.
	eval[bool](p, `(() => { const s = document.getElementById("status"); s.value = "failing"; s.dispatchEvent(new Event("change")); return true })()`)
	p.waitFor("only the failing pods", `[...document.querySelectorAll("#rows tr.pod")].map(r => r.dataset.pod.split("/")[1]).join(" ") === "web-a web-b"`)
	if got := eval[string](p, `document.getElementById("summary").textContent`); !strings.HasPrefix(got, "1 of 2 ready; 2 failing: ") {
		t.Errorf("summary of the failing %q", got)
	}
	if !strings.Contains(eval[string](p, `location.search`), "status=failing") {
		t.Error("the filter is not in the page's address")
	}
	// On a phone, a card per pod, each field under its column's name, and
	// nothing wider than the screen.
	p.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1), chromedp.EmulateMobile))
	if !eval[bool](p, `(() => { const rows = [...document.querySelectorAll("#rows tr.pod")];
		return rows.length > 0 && rows.every(r => getComputedStyle(r).display === "grid" && [...r.cells].every(td => td.dataset.label)) &&
			document.documentElement.scrollWidth <= 390 })()`) {
		t.Error("on a phone's screen the pods are not cards of labelled fields, or the page is wider than the screen")
	}
	p.do(chromedp.EmulateReset())
	p.screenshot("fleet-phone", 390, 844, phoneView)
	eval[bool](p, `(() => { const s = document.getElementById("status"); s.value = ""; s.dispatchEvent(new Event("change"));
		const l = document.getElementById("selector"); l.value = "app!=web"; l.dispatchEvent(new Event("change")); return true })()`)
	p.waitFor("the pods of app!=web", `[...document.querySelectorAll("#rows tr.pod")].map(r => r.dataset.pod.split("/")[1]).join(" ") === "db job"`)

	// Nothing of a pod's outputs beyond what its Events say: the failing
	// conditions' messages are nowhere on the page.
	eval[bool](p, `(() => { const l = document.getElementById("selector"); l.value = ""; l.dispatchEvent(new Event("change")); return true })()`)
	p.waitFor("every pod again", `document.querySelectorAll("#rows tr.pod").length === 4`)
	eval[bool](p, `(() => { document.querySelectorAll("#rows details").forEach(d => d.open = true); return true })()`)
	p.waitFor("web-b's Events unfolded", fleetRow("web-b")+`.querySelector(".events-cell details").open`)
	if text := eval[string](p, `document.body.innerText`); strings.Contains(text, secretOutput) || !strings.Contains(text, "connection refused") {
		t.Errorf("the page shows a condition's message, or not the Events':\n%s", text)
	}
	if !eval[bool](p, `window.notReloaded === true`) {
		t.Error("the page was reloaded")
	}
}

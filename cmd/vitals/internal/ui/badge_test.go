package ui_test

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/ui"
	"github.com/vitals-dev/vitals/health"
)

// svgBadge is what a test reads of a badge: its title and the colours of
// its parts.
type svgBadge struct {
	XMLName xml.Name `xml:"http://www.w3.org/2000/svg svg"`
	Title   string   `xml:"title"`
	Rects   []struct {
		Fill string `xml:"fill,attr"`
	} `xml:"g>rect"`
	Texts []string `xml:"g>text"`
}

// parseBadge parses an SVG badge as XML, failing the test when it is not.
func parseBadge(t *testing.T, body []byte) svgBadge {
	t.Helper()
	var b svgBadge
	if err := xml.Unmarshal(body, &b); err != nil {
		t.Fatalf("the badge is not an SVG document: %v\n%s", err, body)
	}
	return b
}

// Each status has its badge's colour, Gatus's where it has one; the label
// and status are written as text, escaped.
func TestABadgeSaysItsStatusInWordsAndColour(t *testing.T) {
	for status, colour := range map[string]string{"pass": "#40cc11", "warn": "#ccb311", "fail": "#c7130a", "pending": "#9f9f9f", "stopped": "#9f9f9f", "odd": "#9f9f9f"} {
		b := parseBadge(t, ui.Badge("db<&>", status))
		if b.Title != "db<&>: "+status {
			t.Errorf("%s: title %q", status, b.Title)
		}
		if len(b.Rects) < 2 || b.Rects[1].Fill != colour {
			t.Errorf("%s: rects %+v, want the status's part %s", status, b.Rects, colour)
		}
		if !strings.Contains(strings.Join(b.Texts, "|"), "db<&>|db<&>|"+status) {
			t.Errorf("%s: texts %q", status, b.Texts)
		}
	}
}

// A check's badge and a level's say their status as the Monitor has it;
// an unknown one is 404, and a badge only reads.
func TestTheBadgesAreTheChecksAndLevelsStatus(t *testing.T) {
	p := newPage(t, ui.Options{Details: true})
	p.down.Store(true)
	if _, err := p.m.RunNow(context.Background(), "db"); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, "db to fail", func(st client.Status) bool { return st.Checks[1].Status == health.Fail })
	srv := httptest.NewServer(ui.New(p.m, ui.Options{}).Badges())
	t.Cleanup(srv.Close)
	for path, want := range map[string]string{
		"/ui/badge/boot.svg":          "boot: pass",
		"/ui/badge/db.svg":            "db: fail",
		"/ui/badge/loop.svg":          "loop: pending",
		"/ui/badge/level/startup.svg": "startup: pass",
		"/ui/badge/level/ready.svg":   "ready: fail",
		"/ui/badge/level/live.svg":    "live: pass",
	} {
		res, err := http.Get(srv.URL + path)
		must(t, err)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/svg+xml" || res.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s: %s, %q, %q", path, res.Status, res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"))
		}
		if got := parseBadge(t, body).Title; got != want {
			t.Errorf("GET %s says %q, want %q", path, got, want)
		}
		if strings.Contains(string(body), "hunter2") || strings.Contains(string(body), "down") {
			t.Errorf("GET %s carries a reason:\n%s", path, body)
		}
	}
	for _, path := range []string{"/ui/badge/nope.svg", "/ui/badge/db", "/ui/badge/level/sideways.svg", "/ui/badge/level/ready"} {
		res, err := http.Get(srv.URL + path)
		must(t, err)
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", path, res.Status)
		}
	}
	res, err := http.Post(srv.URL+"/ui/badge/db.svg", "text/plain", nil)
	must(t, err)
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST a badge: %s, want 405", res.Status)
	}
}

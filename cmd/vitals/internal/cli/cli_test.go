package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

func TestOneLineFoldsLinesAndEscapesWhatATerminalWouldActOn(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                         "plain",
		"cat: can't open\nno such file": "cat: can't open no such file",
		"\x1b]0;title\x07\x1b[2J":       `\x1b]0;title\a\x1b[2J`,
		"tab\there":                     `tab\there`,
		"héllo wörld":                   "héllo wörld",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAnHTTPTargetTakesAn(t *testing.T) {
	for kind, want := range map[string]string{"http": "an http", "exec": "an exec", "tcp": "a tcp", "file": "a file"} {
		if got := article(kind); got != want {
			t.Errorf("article(%q) = %q, want %q", kind, got, want)
		}
	}
}

func TestDurationsMustBePositiveNamingTheFirstBadFlag(t *testing.T) {
	err := positive(map[string]time.Duration{"timeout": time.Second, "interval": 0, "probe-timeout": -time.Second})
	if err == nil || err.Error() != "--interval 0s: must be positive" {
		t.Fatalf("%v", err)
	}
}

func TestProgressOffATerminalPrintsALinePerChange(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, false)
	pr, err := probe.TCP(probe.TCPSpec{Address: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	refused := health.Result{Output: "connect: connection refused"}
	p.failing(pr, refused)
	p.failing(pr, refused)
	p.status(time.Second, 0, 1)
	p.failing(pr, health.Result{Output: "no route to host"})
	p.passed(pr, health.Result{OK: true, Output: "connected"}, 1500*time.Millisecond)
	want := "waiting: tcp 127.0.0.1:1: connect: connection refused\n" +
		"waiting: tcp 127.0.0.1:1: no route to host\n" +
		"ready: tcp 127.0.0.1:1 (connected) after 1.5s\n"
	if out.String() != want {
		t.Fatalf("progress\n%s\nwant\n%s", out.String(), want)
	}
}

func TestAFailureExitsOneAndBadUsageTwo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"probe", "--timeout", "0s", "http://x/"}, &stdout, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), "Run 'vitals probe --help' for usage.") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if !errors.As(error(failed{"x"}), new(failed)) {
		t.Fatal("failed is not an error of its own type")
	}
}

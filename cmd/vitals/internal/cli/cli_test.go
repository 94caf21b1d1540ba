package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/target"
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

func TestTheOneShotCommandsHideTheSecretsOfTheirTargetsFlagsAndEnvironment(t *testing.T) {
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o := target.DefineFlags(f)
	if err := f.Parse([]string{"--header", "Authorization: Bearer hdr-tok-1", "--header", "X-Trace: trace-1", "--env", "PGPASSWORD=env-pw-1"}); err != nil {
		t.Fatal(err)
	}
	rd := redactor([]string{"http://u:url-pw-1@h/?password=hunter22&token=abcd1234", "tcp://h:1"}, o,
		[]string{"DB_PASSWORD=s3cretpw", "HOME=/home/me"})
	for in, want := range map[string]string{
		"GET http://u:url-pw-1@h/?password=hunter22&token=abcd1234": "GET http://u:xxxxx@h/?password=xxxxx&token=xxxxx",
		"sent Bearer hdr-tok-1, then hdr-tok-1 alone":               "sent xxxxx, then xxxxx alone",
		"trace-1 stays": "trace-1 stays",
		"login with env-pw-1 and s3cretpw failed": "login with xxxxx and xxxxx failed",
		"HOME is /home/me":                        "HOME is /home/me",
	} {
		if got := rd.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAnErrorIsPrintedWithItsControlCharactersEscaped(t *testing.T) {
	var stdout, stderr bytes.Buffer
	// The flag package quotes an unknown flag as given.
	if code := Main([]string{"probe", "--bo\x1b]0;pwned\x07\u202egus", "http://x/"}, &stdout, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), `unknown flag: --bo\x1b]0;pwned\a\u202egus`) || strings.ContainsAny(stderr.String(), "\x1b\x07\u202e") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
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
	p.status(time.Second, 0, 1, "tcp 127.0.0.1:1: connect: connection refused")
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

func TestAnEventLineSaysWhatChangedForEveryKindOfEvent(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	code := 3
	tests := []struct {
		e    health.Event
		want string
	}{
		{health.Event{ID: 7, Time: at, Type: health.EventCheckFailed, Check: "db", Level: health.Ready, From: health.Warn, To: health.Fail, Output: "refused\nagain"},
			"7  2026-01-02T03:04:05.000Z  check-failed  db (ready) warn -> fail: refused again"},
		{health.Event{ID: 8, Time: at, Type: health.EventCheckStopped, Check: "db", Level: health.Ready},
			"8  2026-01-02T03:04:05.000Z  check-stopped  db (ready)"},
		{health.Event{ID: 9, Time: at, Type: health.EventCheckAdded, Check: "cache", Level: health.Live},
			"9  2026-01-02T03:04:05.000Z  check-added  cache (live)"},
		{health.Event{ID: 10, Time: at, Type: health.EventLevelFailed, Level: health.Ready, Output: "process is shutting down"},
			"10  2026-01-02T03:04:05.000Z  level-failed  ready: process is shutting down"},
		{health.Event{ID: 11, Time: at, Type: health.EventStopping, Output: "process is shutting down"},
			"11  2026-01-02T03:04:05.000Z  stopping: process is shutting down"},
		{health.Event{ID: 12, Time: at, Type: health.EventServiceExited, Service: "app", PID: 42, ExitCode: &code, Restarts: 2, Reason: "crash"},
			"12  2026-01-02T03:04:05.000Z  service-exited  app pid 42 exit code 3 restarts 2: crash"},
		{health.Event{ID: 13, Time: at, Type: health.EventNotice, Key: "example.com/config-reloaded", Data: map[string]string{"path": "/etc/app conf", "generation": "4"}},
			`13  2026-01-02T03:04:05.000Z  notice  example.com/config-reloaded generation=4 path="/etc/app conf"`},
		{health.Event{ID: 14, Time: at, Type: health.EventNotice, Key: "leader-elected"},
			"14  2026-01-02T03:04:05.000Z  notice  leader-elected"},
	}
	for _, tt := range tests {
		if got := eventLine(tt.e); got != tt.want {
			t.Errorf("eventLine(%s)\n got %q\nwant %q", tt.e.Type, got, tt.want)
		}
	}
}

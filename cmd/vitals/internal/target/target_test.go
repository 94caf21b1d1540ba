package target

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestEachSchemeNamesItsKind(t *testing.T) {
	for in, want := range map[string]string{
		"http://x/": "http", "HTTPS://x/": "http", "tcp://x:1": "tcp", "tls://x:443": "tls",
		"file:///etc/hosts": "file", "dns://example.com": "dns",
	} {
		if got, err := KindOf(in); err != nil || got != want {
			t.Errorf("KindOf(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"ftp://x/":        `target "ftp://x/": unknown scheme "ftp"`,
		"localhost:8080":  `target "localhost:8080": unknown scheme "localhost"`,
		"file:/etc/hosts": `target "file:/etc/hosts": write file://…`,
		"/etc/hosts":      `target "/etc/hosts" has no scheme`,
	} {
		if _, err := KindOf(in); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("KindOf(%q): %v, want %q…", in, err, want)
		}
	}
}

// log and heartbeat are kinds of vitals.yaml that judge what happens over
// time in vitals run: as targets, they say so, rather than that their
// scheme is unknown.
func TestLogAndHeartbeatTargetsSayWhyTheyCannotRunOnce(t *testing.T) {
	for _, tt := range []struct{ target, want string }{
		{"log://app", "a log check reads the output of the workload that vitals run supervises"},
		{"LOG:app", "a log check reads the output of the workload"},
		{"log", "a log check reads the output of the workload"},
		{"heartbeat://work-loop", "a heartbeat is beaten by the workload (vitals beat NAME) and judged by the vitals run it beats"},
		{"heartbeat", "a heartbeat is beaten by the workload"},
	} {
		_, err := KindOf(tt.target)
		if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("target %q: ", tt.target)) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("KindOf(%q): %v, want %q", tt.target, err, tt.want)
		}
		if _, err := Build(tt.target, Options{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Build(%q): %v, want %q", tt.target, err, tt.want)
		}
	}
	if _, err := KindOf("logs://app"); err == nil || !strings.Contains(err.Error(), `unknown scheme "logs"`) {
		t.Errorf("logs://: %v", err)
	}
}

func TestTargetsBuildTheProbeTheyName(t *testing.T) {
	tests := []struct {
		target string
		o      Options
		want   string // the probe's String
	}{
		{"http://localhost:8080/healthz", Options{}, "GET http://localhost:8080/healthz"},
		{"https://user:secret@api/ready", Options{Method: "HEAD"}, "HEAD https://user:xxxxx@api/ready"},
		{"tcp://localhost:6379", Options{Send: `PING\r\n`, Expect: "+PONG"}, "tcp localhost:6379"},
		{"tls://example.com:443", Options{MinValidity: 7 * 24 * time.Hour}, "tls example.com:443"},
		{"file:///config/peer1/peer1.conf", Options{NonEmpty: true}, "file /config/peer1/peer1.conf"},
		{"dns://example.com", Options{}, "dns example.com A/AAAA"},
		{"dns://example.com?type=txt", Options{}, "dns example.com TXT"},
		{"dns://127.0.0.1:5353/example.com", Options{Type: "aaaa"}, "dns example.com AAAA @127.0.0.1:5353"},
	}
	for _, tt := range tests {
		p, err := Build(tt.target, tt.o)
		if err != nil {
			t.Errorf("Build(%q): %v", tt.target, err)
			continue
		}
		if p.String() != tt.want {
			t.Errorf("Build(%q) = %q, want %q", tt.target, p.String(), tt.want)
		}
	}
}

func TestBadTargetsSayWhatIsWrong(t *testing.T) {
	tests := []struct {
		target string
		o      Options
		want   string
	}{
		{"tcp://localhost", Options{}, `tcp probe: address "localhost": missing port in address`},
		{"tcp://localhost:1/path", Options{}, `target "tcp://localhost:1/path": want tcp://HOST:PORT`},
		{"tls://x:443?sni=y", Options{}, `target "tls://x:443?sni=y": want tls://HOST:PORT`},
		{"file://server/etc/hosts", Options{}, "a file URL names a local path: file:///path (three slashes)"},
		{"file://", Options{}, `target "file://" has no path`},
		{"dns://x?type=A", Options{Type: "AAAA"}, `target "dns://x?type=A" asks for type A, --type for AAAA`},
		{"tcp://user:pw@x:1", Options{}, `target "tcp://user:pw@x:1": want tcp://HOST:PORT`},
		{"tls://x:443#frag", Options{}, `target "tls://x:443#frag": want tls://HOST:PORT`},
		{"file:///tmp/a#b", Options{}, "a ? or # in a path must be written %3F or %23"},
		{"file:///tmp/a?b", Options{}, "a ? or # in a path must be written %3F or %23"},
		{"dns://x", Options{Answer: []string{"not-an-address!"}}, "dns probe"},
		{"tcp://x:1", Options{Send: `\q`}, `--send "\\q": a bad escape`},
		{"http://x/", Options{Header: []string{"Bad Name: v"}}, `--header "Bad Name: v": want "Name: value"`},
	}
	for _, tt := range tests {
		if _, err := Build(tt.target, tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Build(%q): %v, want %q", tt.target, err, tt.want)
		}
	}
}

func TestEscapesLetAProtocolBeTypedOnACommandLine(t *testing.T) {
	for in, want := range map[string]string{
		`PING\r\n`: "PING\r\n", `a\tb`: "a\tb", `\x00\xff`: "\x00\xff", `back\\slash`: `back\slash`,
		`say "hi"\n`: "say \"hi\"\n", "plain": "plain",
	} {
		if got, err := unescape("--send", in); err != nil || got != want {
			t.Errorf("unescape(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestEveryKindFlagIsDefinedOnceWithItsKinds(t *testing.T) {
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var o Options
	DefineFlags(f, &o)
	seen := 0
	f.VisitAll(func(fl *pflag.Flag) {
		seen++
		if len(KindsOf(fl.Name)) == 0 {
			t.Errorf("--%s has no kinds", fl.Name)
		}
	})
	if seen != len(flags) {
		t.Fatalf("%d flags defined, the table has %d", seen, len(flags))
	}
	if err := f.Parse([]string{"--status", "200", "--answer", "1.2.3.4", "--answer", "::1", "--max-age", "1m"}); err != nil {
		t.Fatal(err)
	}
	if o.Status != "200" || len(o.Answer) != 2 || o.MaxAge.String() != "1m0s" {
		t.Fatalf("flags bound to %+v", o)
	}
	if f.Lookup("ca-file").Annotations[cobraFilename] == nil {
		t.Error("--ca-file does not complete file names")
	}
}

func TestFlagsThatDoNotFitAKindAreNamed(t *testing.T) {
	given := map[string]bool{"status": true, "insecure": true, "send": true}
	o := Options{Set: func(f string) bool { return given[f] }}
	if got := o.Unfit("http"); !slices.Equal(got, []string{"--send"}) {
		t.Errorf("unfit for http: %v", got)
	}
	if got := o.Unfit("tls"); !slices.Equal(got, []string{"--status", "--send"}) {
		t.Errorf("unfit for tls: %v", got)
	}
	if got := o.Unfit("postgres"); !slices.Equal(got, []string{"--status", "--insecure", "--send"}) {
		t.Errorf("unfit for postgres, which takes its TLS from its URL: %v", got)
	}
	if got := (Options{}).Unfit("exec"); got != nil {
		t.Errorf("no flags given, unfit %v", got)
	}
}

package target

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

// options are the kind flags of a command line that gave args.
func options(t *testing.T, args ...string) Options {
	t.Helper()
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o := DefineFlags(f)
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

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
		"HTTPX://x/":      `target "HTTPX://x/": unknown scheme "HTTPX"`,
		"TCP:x":           `target "TCP:x": write TCP://…`,
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
		args   []string
		want   string // the probe's String
	}{
		{"http://localhost:8080/healthz", nil, "GET http://localhost:8080/healthz"},
		{"https://user:secret@api/ready", []string{"--method", "HEAD"}, "HEAD https://user:xxxxx@api/ready"},
		{"tcp://localhost:6379", []string{"--send", `PING\r\n`, "--expect", "+PONG"}, "tcp localhost:6379"},
		{"tls://example.com:443", []string{"--min-validity", "168h"}, "tls example.com:443"},
		{"file:///config/peer1/peer1.conf", []string{"--non-empty"}, "file /config/peer1/peer1.conf"},
		{"dns://example.com", nil, "dns example.com A/AAAA"},
		{"dns://example.com?type=txt", nil, "dns example.com TXT"},
		{"dns://127.0.0.1:5353/example.com", []string{"--type", "aaaa"}, "dns example.com AAAA @127.0.0.1:5353"},
	}
	for _, tt := range tests {
		p, err := Build(tt.target, options(t, tt.args...))
		if err != nil {
			t.Errorf("Build(%q): %v", tt.target, err)
			continue
		}
		if p.String() != tt.want {
			t.Errorf("Build(%q) = %q, want %q", tt.target, p.String(), tt.want)
		}
		if p.Watch != nil {
			t.Errorf("Build(%q) is watched: a kind's target is tried again", tt.target)
		}
	}
	if p, err := BuildExec([]string{"true"}, Options{}); err != nil || p.Kind() != "exec" || p.Watch != nil {
		t.Errorf("BuildExec: %s, watched %v, %v", p.Kind(), p.Watch != nil, err)
	}
}

func TestBadTargetsSayWhatIsWrong(t *testing.T) {
	tests := []struct {
		target string
		args   []string
		want   string
	}{
		{"tcp://localhost", nil, `tcp probe: address "localhost": missing port in address`},
		{"tcp://localhost:1/path", nil, `target "tcp://localhost:1/path": want tcp://HOST:PORT`},
		{"tls://x:443?sni=y", nil, `target "tls://x:443?sni=y": want tls://HOST:PORT`},
		{"file://server/etc/hosts", nil, "a file URL names a local path: file:///path (three slashes)"},
		{"file://", nil, `target "file://" has no path`},
		{"dns://x?type=A", []string{"--type", "AAAA"}, `target "dns://x?type=A" asks for type A, --type for AAAA`},
		{"tcp://user:pw@x:1", nil, `target "tcp://user:pw@x:1": want tcp://HOST:PORT`},
		{"tls://x:443#frag", nil, `target "tls://x:443#frag": want tls://HOST:PORT`},
		{"file:///tmp/a#b", nil, "a ? or # in a path must be written %3F or %23"},
		{"file:///tmp/a?b", nil, "a ? or # in a path must be written %3F or %23"},
		{"dns://x", []string{"--answer", "not-an-address!"}, "dns probe"},
		{"tcp://x:1", []string{"--send", `\q`}, `--send "\\q": a bad escape`},
		{"http://x/", []string{"--header", "Bad Name: v"}, `--header "Bad Name: v": want "Name: value"`},
		// A repeatable flag's one value reaches its kind as given, even
		// empty: a flag set's string form of it would lose it.
		{"http://x/", []string{"--header", ""}, `--header "": want "Name: value"`},
		{"dns://x", []string{"--answer", ""}, `expected answer "" is not an IP address`},
	}
	for _, tt := range tests {
		if _, err := Build(tt.target, options(t, tt.args...)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Build(%q): %v, want %q", tt.target, err, tt.want)
		}
	}
	if _, err := BuildExec([]string{"true"}, options(t, "--env", "")); err == nil || !strings.Contains(err.Error(), `env entry "" is not KEY=VALUE`) {
		t.Errorf(`BuildExec with --env "": %v`, err)
	}
}

// A repeatable flag's value reaches its kind byte for byte: a CR LF in it
// stays one.
func TestARepeatableFlagsValueReachesTheProbeAsGiven(t *testing.T) {
	p, err := BuildExec([]string{"sh", "-c", `test "$V" = "$(printf 'a\r\nb')"`}, options(t, "--env", "V=a\r\nb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(t.Context()); err != nil {
		t.Errorf("--env V=a\\r\\nb: the command saw another value: %v", err)
	}
}

// Every flag of every kind is defined once, however many kinds take it,
// with those kinds before its usage; its value reaches the kind's probe.
func TestEveryKindFlagIsDefinedOnceWithItsKinds(t *testing.T) {
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o := DefineFlags(f)
	want := 0
	for _, k := range kinds.All {
		for _, fl := range k.CLI.Flags() {
			if !slices.Contains(KindsOf(fl.Name), k.Name) {
				t.Errorf("--%s: kinds %v, without %s", fl.Name, KindsOf(fl.Name), k.Name)
			}
			if KindsOf(fl.Name)[0] == k.Name {
				want++
			}
		}
	}
	seen := 0
	f.VisitAll(func(fl *pflag.Flag) {
		seen++
		if kinds := KindsOf(fl.Name); len(kinds) == 0 || !strings.HasPrefix(fl.Usage, strings.Join(kinds, ", ")+": ") {
			t.Errorf("--%s: kinds %v, usage %q", fl.Name, kinds, fl.Usage)
		}
	})
	if seen != want+len(kubeFlags) {
		t.Fatalf("%d flags defined, the kinds have %d and k8s %d", seen, want, len(kubeFlags))
	}
	if got := KindsOf("insecure"); !slices.Equal(got, []string{"http", "tls", "grpc", "metric"}) {
		t.Errorf("--insecure is of %v", got)
	}
	if err := f.Parse([]string{"--status", "200", "--answer", "1.2.3.4", "--answer", "::1", "--max-age", "1m"}); err != nil {
		t.Fatal(err)
	}
	if got := o.Given(); !slices.Equal(got, []string{"status", "max-age", "answer"}) {
		t.Fatalf("given %v", got)
	}
	if f.Lookup("ca-file").Annotations[cobraFilename] == nil {
		t.Error("--ca-file does not complete file names")
	}
	if got := Choices()["type"]; !slices.Equal(got, []string{"A", "AAAA", "CNAME", "MX", "TXT", "NS"}) {
		t.Errorf("--type completes %v", got)
	}
}

// A flag's value is its kind's: --status reaches the http probe, and an
// answer --answer gives must be among the dns probe's answers.
func TestAFlagsValueReachesTheProbe(t *testing.T) {
	o := options(t, "--answer", "not-an-address!", "--status", "600")
	if _, err := Build("http://x/", o); err == nil || !strings.Contains(err.Error(), "600") {
		t.Errorf("--status 600: %v", err)
	}
	if _, err := Build("dns://x", o); err == nil || !strings.Contains(err.Error(), "not-an-address!") {
		t.Errorf("--answer not-an-address!: %v", err)
	}
}

func TestFlagsThatDoNotFitAKindAreNamed(t *testing.T) {
	o := options(t, "--send", "x", "--insecure", "--status", "200")
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

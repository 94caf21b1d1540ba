package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/internal/kubeenv"
	"github.com/vitals-dev/vitals/internal/testenv"
	"github.com/vitals-dev/vitals/probe/probetest"
)

// vitals is the binary under test, built once, static, as users get it;
// vitalsProbe is the probe build of it (-tags vitals_probe).
var vitals, vitalsProbe string

// releaseTags are the build tags of the releases and the image
// (hack/release.sh, hack/image.sh), which the binaries under test are built
// with too: grpcnotrace leaves grpc's debug pages out (golang.org/x/net/trace,
// on http.DefaultServeMux, which vitals never serves), whose templates would
// make the linker keep every exported method of every type
// (TestTheBuildsKeepOnlyTheMethodsTheyCall).
const releaseTags = "grpcnotrace"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vitals-cli-test")
	if err != nil {
		log.Fatal(err)
	}
	vitals = filepath.Join(dir, "vitals")
	vitalsProbe = filepath.Join(dir, "probe", "vitals")
	for _, args := range [][]string{{"-tags", releaseTags, "-o", vitals}, {"-tags", "vitals_probe," + releaseTags, "-o", vitalsProbe}} {
		// Without version control information, whether or not this is a git
		// clone: the binary says dev (TestVersionSaysTheCommitItWasBuiltFrom
		// builds one with it).
		build := exec.Command("go", append(append([]string{"build", "-buildvcs=false"}, args...), ".")...)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			log.Fatalf("go build %v: %v\n%s", args, err, out)
		}
	}
	code := m.Run()
	kubeenv.StopShared() // the API server of the tests that asked for one
	os.RemoveAll(dir)
	os.Exit(code)
}

type run struct {
	code           int
	stdout, stderr string
}

// vitalsRun runs the binary with args and returns what it did. A generous
// guard stops a hung run; it is no measurement.
func vitalsRun(t *testing.T, args ...string) run {
	t.Helper()
	return binaryRun(t, vitals, args...)
}

// binaryRun is vitalsRun for a given build of vitals.
func binaryRun(t *testing.T, binary string, args ...string) run {
	t.Helper()
	return runToEnd(t, exec.Command(binary, args...))
}

// vitalsRunWithStdin is vitalsRun with stdin to read.
func vitalsRunWithStdin(t *testing.T, stdin string, args ...string) run {
	t.Helper()
	cmd := exec.Command(vitals, args...)
	cmd.Stdin = strings.NewReader(stdin)
	return runToEnd(t, cmd)
}

// runToEnd runs cmd, a vitals command, and returns what it did.
func runToEnd(t *testing.T, cmd *exec.Cmd) run {
	t.Helper()
	args := cmd.Args[1:]
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("vitals %v did not end within 30s", args)
	}
	return run{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
}

func (r run) expect(t *testing.T, code int, stdout, stderr string) {
	t.Helper()
	if r.code != code || !strings.Contains(r.stdout, stdout) || !strings.Contains(r.stderr, stderr) {
		t.Fatalf("exit %d\nstdout: %q\nstderr: %q\nwant exit %d, stdout with %q, stderr with %q",
			r.code, r.stdout, r.stderr, code, stdout, stderr)
	}
}

func server(t *testing.T, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		fmt.Fprint(w, `{"status":"up"}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestTheBinaryIsStaticAndRunsAlone(t *testing.T) {
	f, err := elf.Open(vitals)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary asks for a dynamic loader; built with CGO_ENABLED=0 it must not")
		}
	}
	// Alone: copied into an empty directory, with an empty environment.
	lone := filepath.Join(t.TempDir(), "vitals")
	b, _ := os.ReadFile(vitals)
	os.WriteFile(lone, b, 0o755)
	cmd := exec.Command(lone, "version")
	cmd.Env, cmd.Dir = []string{}, filepath.Dir(lone)
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), "vitals ") {
		t.Fatalf("vitals version alone: %q %v", out, err)
	}
}

func TestVersionSaysWhatItIs(t *testing.T) {
	vitalsRun(t, "version").expect(t, 0, "vitals dev (go1.", "")
	vitalsRun(t, "--version").expect(t, 0, "vitals dev (go1.", "")
	vitalsRun(t, "-v").expect(t, 0, "vitals dev (go1.", "")
	vitalsRun(t, "--version", "--help").expect(t, 0, "vitals runs startup, liveness and readiness checks.", "") // --help wins, as in cobra
	if help := vitalsRun(t, "--help"); !strings.Contains(help.stdout, "-v, --version   version for vitals") {
		t.Errorf("vitals --help does not list -v, --version:\n%s", help.stdout)
	}
	vitalsRun(t, "version", "-o", "json").expect(t, 0, "{\n  \"version\": \"dev\",\n  \"goVersion\": \"go1.", "")
	vitalsRun(t, "version", "-o", "yaml").expect(t, 0, "version: dev\ngoVersion: go1.", "")
}

// A binary built from a git work tree with its version control information
// says the commit it was built from, in text and in JSON: the build
// information is what vitals version reads, whichever way it was built.
func TestVersionSaysTheCommitItWasBuiltFrom(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		testenv.Missing(t, "not a git work tree here: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "vitals")
	if out, err := exec.Command("go", "build", "-tags", "vitals_probe", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true: %v\n%s", err, out)
	}
	rev := strings.TrimSpace(string(head))
	binaryRun(t, bin, "version").expect(t, 0, "revision "+rev, "")
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	var b struct{ Version, Revision, Time, GoVersion, Build string }
	// The version is Go's from git: the pseudo-version of the commit
	// (v0.0.0-…, v0.1.1-0.… after a tag), or the tag cmd/vitals/v0.1.0 on it.
	fromGit := regexp.MustCompile(`^v\d+\.\d+\.\d+(-(0\.)?\d{14}-[0-9a-f]{12})?(\+dirty)?$`)
	if err != nil || json.Unmarshal(out, &b) != nil || b.Revision != rev || b.Time == "" || b.Build != "probe" || !fromGit.MatchString(b.Version) {
		t.Errorf("vitals version -o json: %s %v; want revision %s, its time, a version from git and build probe", out, err, rev)
	}
}

func TestHelpShowsExamplesAndCompletionWorks(t *testing.T) {
	vitalsRun(t, "probe", "--help").expect(t, 0, "vitals probe tcp://localhost:6379 --send 'PING\\r\\n' --expect '+PONG'", "")
	vitalsRun(t, "wait", "--help").expect(t, 0, "vitals wait tcp://postgres:5432", "")
	vitalsRun(t, "completion", "bash").expect(t, 0, "bash completion", "")
}

func TestProbeIsQuietOnSuccessAndSaysWhyOnFailure(t *testing.T) {
	up, down := server(t, 200), server(t, 503)
	r := vitalsRun(t, "probe", up+"/healthz")
	r.expect(t, 0, "", "")
	if r.stdout != "" || r.stderr != "" {
		t.Fatalf("a passing probe printed %q %q; want nothing", r.stdout, r.stderr)
	}
	vitalsRun(t, "probe", "-v", up+"/healthz").expect(t, 0, "ok: GET "+up+"/healthz: HTTP 200 in ", "")
	r = vitalsRun(t, "probe", down)
	r.expect(t, 1, "", "GET "+down+": HTTP probe failed with statuscode: 503\n")
	if n := strings.Count(r.stderr, "\n"); n != 1 {
		t.Fatalf("failure output has %d lines, want one: %q", n, r.stderr)
	}
	vitalsRun(t, "probe", down, "--status", "200,503").expect(t, 0, "", "")
	vitalsRun(t, "probe", up, "--body", `"status":"down"`).expect(t, 1, "", `body does not match "\"status\":\"down\""`)
}

func TestProbeWritesJSON(t *testing.T) {
	down := server(t, 503)
	r := vitalsRun(t, "probe", down, "-o", "json")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1", r.code)
	}
	var got struct {
		Target, Kind, Output, ObservedUnit, Duration string
		OK                                           bool
		ObservedValue                                float64
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if got.Kind != "http" || got.OK || got.Output != "HTTP probe failed with statuscode: 503" ||
		got.ObservedUnit != "ms" || got.Target != "GET "+down || got.Duration == "" {
		t.Fatalf("JSON %+v", got)
	}
}

// tcpServer serves each connection with serve, closing it after, until the
// test ends, and returns its address.
func tcpServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

func TestProbeCoversEveryKind(t *testing.T) {
	redis := tcpServer(t, func(c net.Conn) {
		buf := make([]byte, 64)
		if n, _ := c.Read(buf); strings.HasPrefix(string(buf[:n]), "PING") {
			io.WriteString(c, "+PONG\r\n")
		}
	})
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is one of the cases
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	dir := t.TempDir()
	conf := filepath.Join(dir, "peer1.conf")
	os.WriteFile(conf, []byte("[Peer]\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	refused := closedPort(t)

	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"probe", "tcp://" + redis}, 0, ""},
		{[]string{"probe", "tcp://" + redis, "--send", `PING\r\n`, "--expect", "+PONG"}, 0, ""},
		{[]string{"probe", "tcp://" + refused}, 1, "connection refused"},
		{[]string{"probe", "tls://" + strings.TrimPrefix(tlsSrv.URL, "https://"), "--insecure"}, 0, ""},
		{[]string{"probe", "tls://" + strings.TrimPrefix(tlsSrv.URL, "https://")}, 1, "certificate"},
		{[]string{"probe", "file://" + conf, "--non-empty", "--max-age", "1h"}, 0, ""},
		{[]string{"probe", "file://" + empty, "--non-empty"}, 1, empty + ": the file is empty"},
		{[]string{"probe", "file://" + filepath.Join(dir, "nope")}, 1, "no such file or directory"},
		{[]string{"probe", "dns://localhost"}, 0, ""},
		{[]string{"probe", "--", "true"}, 0, ""},
		{[]string{"probe", "--", "sh", "-c", "echo peer config >&2; echo missing >&2; exit 3"}, 1, `exec sh -c "echo peer config >&2; echo missing >&2; exit 3": peer config missing` + "\n"},
		{[]string{"probe", "--timeout", "200ms", "--", "sleep", "10"}, 1, `command "sleep 10" timed out after 200ms`},
	}
	for _, binary := range []string{vitals, vitalsProbe} { // the probe build probes every kind alike
		for _, tt := range tests {
			binaryRun(t, binary, tt.args...).expect(t, tt.code, "", tt.stderr)
		}
	}
}

func TestBadInputIsAUsageErrorThatSaysWhatAndWhere(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"probe"}, "probe takes one target: a URL, or -- COMMAND [ARGS...] (got 0)"},
		{[]string{"probe", "http://a/", "http://b/"}, "probe takes one target"},
		{[]string{"probe", "ftp://example.com/"}, `target "ftp://example.com/": unknown scheme "ftp"`},
		{[]string{"probe", "localhost:8080"}, `target "localhost:8080": unknown scheme "localhost"`},
		{[]string{"probe", "/etc/hosts"}, `target "/etc/hosts" has no scheme`},
		{[]string{"probe", "file:///tmp/a#b"}, "a ? or # in a path must be written %3F or %23"},
		{[]string{"probe", "http://x/", "--status", ""}, "--status is empty: give it a value, or leave it out"},
		{[]string{"probe", "http://a b/"}, `target "http://a b/": parse "http://a b/": invalid character " " in host name`},
		{[]string{"probe", "http://x/", "--status", "500-200"}, `status set "500-200": range 500-200 runs backwards`},
		{[]string{"probe", "http://x/", "--body", "("}, `body pattern "(": error parsing regexp`},
		{[]string{"probe", "http://x/", "--timeout", "-1s"}, "--timeout -1s: must be positive"},
		{[]string{"probe", "http://x/", "--timeout", "soon"}, `invalid argument "soon" for "--timeout"`},
		{[]string{"probe", "tcp://x:1", "--status", "200"}, "--status does not apply to a tcp target (tcp://x:1)"},
		{[]string{"probe", "tcp://x"}, "tcp"},
		{[]string{"probe", "http://x/", "--header", "NoColon"}, `--header "NoColon": want "Name: value"`},
		{[]string{"probe", "http://x/", "-o", "table"}, `invalid argument "table" for "-o, --output" flag: use text, json or yaml`},
		{[]string{"probe", "--"}, "-- must be followed by a command"},
		{[]string{"probe", "--", "no-such-command-vitals"}, `"no-such-command-vitals" not found`},
		{[]string{"probe", "--bogus", "http://x/"}, "unknown flag: --bogus"},
		{[]string{"wait"}, "wait needs at least one target"},
		{[]string{"wait", "http://x/", "ftp://y/", "--timeout", "1s"}, `unknown scheme "ftp"`},
		{[]string{"wait", "http://x/", "--send", "PING"}, "--send applies to tcp targets, and there is none"},
		{[]string{"wait", "http://x/", "--answer", "10.0.0.5"}, "--answer applies to dns targets, and there is none"},
		{[]string{"wait", "http://x/", "--interval", "0s"}, "--interval 0s: must be positive"},
		{[]string{"wait", "http://x/", "--interval", "1ns"}, "--interval 1ns: must be at least 10ms, or the wait is a busy loop"},
		{[]string{"nonsense"}, `unknown command "nonsense"`},
	}
	for _, tt := range tests {
		r := vitalsRun(t, tt.args...)
		r.expect(t, 2, "", tt.want)
		if !strings.HasPrefix(r.stderr, "vitals: ") {
			t.Errorf("vitals %v: stderr %q does not start with \"vitals: \"", tt.args, r.stderr)
		}
	}
}

func TestWaitReturnsOnceEveryTargetPasses(t *testing.T) {
	addr := closedPort(t)
	conf := filepath.Join(t.TempDir(), "peer1.conf")
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.WriteFile(conf, []byte("[Peer]\n"), 0o600)
		time.Sleep(300 * time.Millisecond)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return // the port was taken meanwhile; the test then times out and says so
		}
		t.Cleanup(func() { ln.Close() })
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	r := vitalsRun(t, "wait", "tcp://"+addr, "file://"+conf, "--non-empty", "--timeout", "20s")
	r.expect(t, 0, "", "ready: 2 of 2 after")
	for _, want := range []string{"ready: file " + conf, "ready: tcp " + addr, "waiting: tcp " + addr} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	// Not a terminal: a line per change, not per attempt.
	if n := strings.Count(r.stderr, "waiting: tcp "+addr); n != 1 {
		t.Errorf("%d waiting lines for the same failure, want 1:\n%s", n, r.stderr)
	}
}

func TestWaitTimesOutSayingWhatStillFails(t *testing.T) {
	up, refused := server(t, 200), closedPort(t)
	r := vitalsRun(t, "wait", up, "tcp://"+refused, "--timeout", "1s", "--interval", "200ms", "-o", "json")
	r.expect(t, 1, "", "vitals wait: timed out after 1s; not ready:\n  tcp "+refused+": ")
	if strings.Contains(r.stderr, "not ready:\n  GET") {
		t.Errorf("the passing target is listed as not ready:\n%s", r.stderr)
	}
	var results []struct {
		Target string
		OK     bool
	}
	if err := json.Unmarshal([]byte(r.stdout), &results); err != nil || len(results) != 2 || !results[0].OK || results[1].OK {
		t.Fatalf("JSON %s (%v), want the two last results, the first passing", r.stdout, err)
	}
}

func TestAnInterruptedProbeSaysWhatItSawNotThatItTimedOut(t *testing.T) {
	cmd := exec.Command(vitals, "probe", "tcp://"+probetest.SilentListener(t).Addr().String(), "--expect", "+OK", "--timeout", "20s")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // let it connect; only then is there something to say
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 1 || strings.Contains(stderr.String(), "timed out") ||
		!strings.Contains(stderr.String(), "no answer came") {
		t.Fatalf("exit %d, stderr %q; want 1 and what the probe saw, not a timeout", code, stderr.String())
	}
}

func TestWaitReportsTheLastWholeAttemptOfASlowTarget(t *testing.T) {
	r := vitalsRun(t, "wait", "tcp://"+probetest.SilentListener(t).Addr().String(), "--expect", "+OK", "--timeout", "1500ms", "--probe-timeout", "700ms")
	r.expect(t, 1, "", "timed out after 700ms: ")
	if !strings.Contains(r.stderr, "no answer came") {
		t.Fatalf("stderr %q: want the reason of the last whole attempt", r.stderr)
	}
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vitals.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestValidateSaysEveryErrorWithFileLineAndField(t *testing.T) {
	good := writeConfig(t, `
checks:
  peer-config:
    file: {path: /config/peer1/peer1.conf, non-empty: true}
    period: 2s
    stable-for: 30s
  api:
    level: live
    http: {url: "http://admin:${API_PASSWORD}@localhost:8080/healthz"}
  mq-lost:
    log: {fail-pattern: "connection to MQ lost"}
`)
	r := vitalsRun(t, "validate", "-c", good)
	r.expect(t, 2, "", good+":9:17: checks.api.http.url: environment variable API_PASSWORD is not set")
	cmd := exec.Command(vitals, "validate", "-c", good, "--print")
	cmd.Env = append(os.Environ(), "API_PASSWORD=hunter2")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("validate --print: %v", err)
	}
	for _, want := range []string{"  peer-config:\n    level: ready\n", "    period: 2s\n    timeout: 1s\n",
		"    failure-threshold: 3\n    stable-for: 30s\n", "admin:xxxxx@localhost",
		"    log: {fail-pattern: \"connection to MQ lost\"}\n", "    failure-threshold: 1\n    stable-for: 0s\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--print lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "hunter2") {
		t.Errorf("--print shows the password:\n%s", out)
	}
	// What --print writes loads back.
	printed := writeConfig(t, string(out)+"  loop:\n    level: live\n    heartbeat: {ttl: 30s}\n")
	again := exec.Command(vitals, "validate", "-c", printed, "--print")
	again.Env = cmd.Env
	reprinted, err := again.CombinedOutput()
	if err != nil || !strings.Contains(string(reprinted), "  loop:\n    level: live\n    heartbeat: {ttl: 30s}\n") {
		t.Fatalf("validate of what --print wrote: %v\n%s", err, reprinted)
	}
	bad := writeConfig(t, "checks:\n  db:\n    tcp: {address: localhost}\n    perod: 2s\n  Web:\n    http: {url: ftp://x/}\n")
	r = vitalsRun(t, "validate", "-c", bad)
	r.expect(t, 2, "", bad+":3:10: checks.db.tcp: address \"localhost\": missing port in address\n"+
		bad+":4:5: checks.db.perod: unknown field \"perod\"")
	if !strings.Contains(r.stderr, bad+":5:3: checks.Web: a check name is lower case") || strings.Contains(r.stderr, "--help") {
		t.Fatalf("stderr %q: want every error, and no usage hint", r.stderr)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	return closedPort(t)
}

func TestRunServesTheChecksOfItsFileAndDrainsOnSIGTERM(t *testing.T) {
	addr := freeAddr(t)
	conf := filepath.Join(t.TempDir(), "peer1.conf")
	path := writeConfig(t, fmt.Sprintf(`
listen: %s
api: %s
checks:
  peer-config:
    file: {path: %s, non-empty: true}
    period: 100ms
    failure-threshold: 1
`, addr, filepath.Join(t.TempDir(), "vitals.sock"), conf))
	cmd := exec.Command(vitals, "run", "-c", path)
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	get := func() (int, string) {
		res, err := http.Get("http://" + addr + "/readyz?verbose")
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 20s; logs:\n%s", what, logs.String())
			}
		}
	}
	waitUntil("readyz fails while the file is missing", func() bool {
		code, body := get()
		return code == 503 && strings.Contains(body, "[-]peer-config failed: stat "+conf+": no such file or directory")
	})
	os.WriteFile(conf, []byte("[Peer]\n"), 0o600)
	waitUntil("readyz passes once the file is there", func() bool { code, _ := get(); return code == 200 })
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("vitals run did not stop within 20s of SIGTERM; logs:\n%s", logs.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(logs.String(), "stopping: readiness fails from now on") {
		t.Fatalf("exit %d; logs:\n%s", code, logs.String())
	}
}

func TestRunWithABadFileStartsNothing(t *testing.T) {
	addr := freeAddr(t)
	path := writeConfig(t, fmt.Sprintf("listen: %s\nchecks:\n  db:\n    tcp: {address: localhost:5432}\n    period: soon\n", addr))
	r := vitalsRun(t, "run", "-c", path)
	r.expect(t, 2, "", path+`:5:13: checks.db.period: "soon" is not a duration such as 10s, 500ms or 1m30s`)
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("something listens on the probe address after a bad file")
	}
	vitalsRun(t, "run", "-c", filepath.Join(t.TempDir(), "missing.yaml")).expect(t, 2, "", "read configuration: open ")
}

func TestRunSaysSoWhenItCannotListen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nchecks:\n  db:\n    tcp: {address: localhost:5432}\n",
		ln.Addr(), filepath.Join(t.TempDir(), "vitals.sock")))
	vitalsRun(t, "run", "-c", path).expect(t, 1, "", "vitals run: serve the probe endpoints: listen tcp "+ln.Addr().String()+": bind: address already in use")
}

func init() { workloadtest.Main() }

// supervised starts vitals run with a file of extra (and a passing check),
// its workload this test binary doing what; it returns the running vitals,
// its logs, the probe address, and the workload's ready file.
func supervised(t *testing.T, extra string, what ...string) (*exec.Cmd, *vitalstest.Buffer, string, string) {
	t.Helper()
	return supervisedBy(t, func(dir string) string {
		os.WriteFile(filepath.Join(dir, "ok"), []byte("ok"), 0o600)
		return fmt.Sprintf("%s\nchecks:\n  ok:\n    file: {path: %s}\n    period: 100ms\n    failure-threshold: 1\n", extra, filepath.Join(dir, "ok"))
	}, what...)
}

// supervisedBy is supervised with the file's lines after listen: and api:
// as file writes them, given the test's directory.
func supervisedBy(t *testing.T, file func(dir string) string, what ...string) (*exec.Cmd, *vitalstest.Buffer, string, string) {
	t.Helper()
	addr := freeAddr(t)
	dir := t.TempDir()
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\n%s", addr, filepath.Join(dir, "vitals.sock"), file(dir)))
	ready := filepath.Join(dir, "ready")
	args := append([]string{"run", "-c", path, "--", os.Args[0], what[0], ready}, what[1:]...)
	cmd := exec.Command(vitals, args...)
	cmd.Env = append(os.Environ(), workloadtest.Env+"=1")
	logs := &vitalstest.Buffer{}
	cmd.Stderr = logs
	// A workload left behind by a failed test holds the output open.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// vitals stops its workload as it stops, also one that a restart
		// has just started and whose pid is not yet in ready; killed, it
		// would leave it behind.
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		killWorkload(ready)
	})
	return cmd, logs, addr, ready
}

// exited waits (a guard only) for vitals to end and returns its exit code.
func exited(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("vitals run did not end within 30s")
	}
	return cmd.ProcessState.ExitCode()
}

// pidIn waits (a guard only) for the workload to write its pid to ready.
func pidIn(t *testing.T, ready string) int {
	t.Helper()
	return workloadtest.WaitPID(t, ready)
}

// waitReadyzIs waits (a guard only) until /readyz on addr answers code.
func waitReadyzIs(t *testing.T, addr string, code int, logs *vitalstest.Buffer) {
	t.Helper()
	waitFor(t, fmt.Sprintf("/readyz to answer %d", code), logs, func() bool { return readyz(addr) == code })
}

func readyz(addr string) int {
	res, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

func TestRunExitsWithTheWorkloadsCode(t *testing.T) {
	cmd, logs, _, _ := supervised(t, "", "exit", "3")
	if code := exited(t, cmd); code != 3 {
		t.Fatalf("exit %d, want the workload's 3; logs:\n%s", code, logs)
	}
	cmd, logs, _, _ = supervised(t, "", "kill-self")
	if code := exited(t, cmd); code != 137 {
		t.Fatalf("exit %d, want 128+SIGKILL; logs:\n%s", code, logs)
	}
}

func TestRunDrainsThenStopsTheWorkloadOnSIGTERM(t *testing.T) {
	const drain = 1500 * time.Millisecond
	cmd, logs, addr, ready := supervised(t, "drain: 1500ms\nservice: {stop-timeout: 10s}", "sleep")
	pid := pidIn(t, ready)
	waitReadyzIs(t, addr, 200, logs)
	began := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	// During the drain readiness fails while the workload still runs.
	time.Sleep(drain / 3)
	if code := readyz(addr); code != 503 {
		t.Errorf("readyz %d during the drain, want 503", code)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("the workload is gone during the drain: %v", err)
	}
	if code := exited(t, cmd); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit %d, want 143 (the workload's SIGTERM); logs:\n%s", code, logs)
	}
	if took := time.Since(began); took < drain {
		t.Errorf("stopped %v after SIGTERM, before the drain of %v", took, drain)
	}
	for _, want := range []string{"stopping: readiness fails from now on", "workload exited", "reason=stopping"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
}

// A second SIGTERM or SIGINT during the drain ends it: the workload gets its
// stop signal at once, as people at a terminal expect of a second Ctrl-C.
func TestASecondSignalEndsTheDrainAtOnce(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			const drain = time.Minute
			cmd, logs, addr, ready := supervised(t, "drain: 1m\nservice: {stop-timeout: 10s}", "sleep")
			pid := pidIn(t, ready)
			waitReadyzIs(t, addr, 200, logs)
			cmd.Process.Signal(sig)
			waitReadyzIs(t, addr, 503, logs)
			if err := syscall.Kill(pid, 0); err != nil {
				t.Fatalf("the workload is gone during the drain: %v", err)
			}
			began := time.Now()
			cmd.Process.Signal(sig)
			if code := exited(t, cmd); code != 128+int(syscall.SIGTERM) {
				t.Fatalf("exit %d, want 143 (the workload's stop signal); logs:\n%s", code, logs)
			}
			if took := time.Since(began); took >= drain/2 {
				t.Errorf("stopped %v after the second signal, with a drain of %v", took, drain)
			}
			if !strings.Contains(logs.String(), "a second signal: the drain ends now") {
				t.Errorf("logs do not say the second signal ended the drain:\n%s", logs)
			}
		})
	}
}

// A third signal waits for nothing more: a workload that ignores its stop
// signal is killed at once, not at the end of stop-timeout.
func TestAThirdSignalKillsTheWorkloadAtOnce(t *testing.T) {
	cmd, logs, addr, ready := supervised(t, "drain: 1m\nservice: {stop-timeout: 1m}", "ignore-term")
	pidIn(t, ready)
	waitReadyzIs(t, addr, 200, logs)
	began := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	for _, want := range []string{"stopping: readiness fails from now on", "a second signal: the drain ends now"} {
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(logs.String(), want); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("logs lack %q within 20s:\n%s", want, logs)
			}
		}
		cmd.Process.Signal(syscall.SIGINT)
	}
	if code := exited(t, cmd); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want 137 (the workload killed); logs:\n%s", code, logs)
	}
	if took := time.Since(began); took >= 30*time.Second {
		t.Errorf("stopped %v after the first signal, with a drain and a stop-timeout of 1m", took)
	}
	if !strings.Contains(logs.String(), "a third signal: the workload's group is killed") {
		t.Errorf("logs do not say the third signal killed the workload:\n%s", logs)
	}
}

// A command or directory that does not exist is said with the file's
// secrets hidden, as validate hides them.
func TestRunsErrorsHideTheSecretsOfTheFile(t *testing.T) {
	const secret = "hunter2-s3cret"
	dir := t.TempDir()
	for _, service := range []string{
		`service: {command: ["/nonexistent/${DB_PASSWORD}/serve"]}`,
		`service: {command: [sleep, "60"], dir: "/nonexistent/${DB_PASSWORD}"}`,
	} {
		path := writeConfig(t, fmt.Sprintf("api: %s\n%s\nchecks:\n  a: {heartbeat: {ttl: 1s}}\n", filepath.Join(dir, "vitals.sock"), service))
		cmd := exec.Command(vitals, "run", "-c", path)
		cmd.Env = append(os.Environ(), "DB_PASSWORD="+secret)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 2 || strings.Contains(stderr.String(), secret) || !strings.Contains(stderr.String(), "/nonexistent/xxxxx") {
			t.Errorf("%s: exit %d, stderr %q: want exit 2 and the path with xxxxx for the secret", service, code, stderr.String())
		}
	}
}

func TestRunKillsAWorkloadThatIgnoresSIGTERMAfterStopTimeout(t *testing.T) {
	cmd, logs, _, ready := supervised(t, "service: {stop-timeout: 300ms}", "ignore-term")
	pidIn(t, ready)
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exited(t, cmd); code != 137 {
		t.Fatalf("exit %d, want 137; logs:\n%s", code, logs)
	}
	if !strings.Contains(logs.String(), "the workload did not stop in time: SIGKILL") {
		t.Errorf("logs:\n%s", logs)
	}
}

func TestRunForwardsSIGHUPToTheWorkload(t *testing.T) {
	cmd, logs, _, ready := supervised(t, "", "hup")
	pidIn(t, ready)
	cmd.Process.Signal(syscall.SIGHUP)
	if code := exited(t, cmd); code != 42 {
		t.Fatalf("exit %d, want 42 from the workload's SIGHUP handler; logs:\n%s", code, logs)
	}
}

// The workload starts a grandchild and exits; the grandchild exits later, an
// orphan handed to vitals (its subreaper), which must reap it.
// It may have left the workload's session (setsid), or only its group
// (setpgid), as an exec check's command does: that one is reaped once
// os/exec has had its chance.
func TestRunReapsWhatTheWorkloadLeaves(t *testing.T) {
	for _, how := range []string{"fork-away", "fork-own-group"} {
		t.Run(how, func(t *testing.T) { reapsWhatTheWorkloadLeaves(t, how) })
	}
}

func reapsWhatTheWorkloadLeaves(t *testing.T, how string) {
	cmd, logs, _, ready := supervised(t, "service: {restart: always, backoff: {initial: 1m, max: 1m}}", how)
	grandchild := pidIn(t, ready)
	// parent is the grandchild's parent, 0 once it is gone (reaped).
	parent := func() int {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", grandchild))
		if err != nil {
			return 0
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		ppid, _ := strconv.Atoi(f[1])
		return ppid
	}
	for deadline := time.Now().Add(20 * time.Second); parent() != cmd.Process.Pid; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the grandchild (parent %d) was not handed to vitals within 20s; logs:\n%s", parent(), logs)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); parent() == cmd.Process.Pid; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", grandchild))
			t.Fatalf("the grandchild is still under vitals after 20s: %s\nlogs:\n%s", b, logs)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exited(t, cmd); code != 0 {
		t.Fatalf("exit %d, want the workload's last 0; logs:\n%s", code, logs)
	}
}

// An exec check that runs every 50ms beside a workload, and so beside the
// reaper, keeps passing. (A guard only: the reaper leaves os/exec's children
// alone by rule, and a race that took one would be rare here.)
func TestRunsExecChecksBesideTheReaper(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		testenv.Missing(t, "no true in $PATH")
	}
	addr := freeAddr(t)
	dir := t.TempDir()
	path := writeConfig(t, fmt.Sprintf(`listen: %s
api: %s
checks:
  cmd:
    exec: {command: [%q]}
    period: 50ms
    timeout: 50ms
    failure-threshold: 1
`, addr, filepath.Join(dir, "vitals.sock"), truePath))
	ready := filepath.Join(dir, "ready")
	cmd := exec.Command(vitals, "run", "-c", path, "--", os.Args[0], "sleep", ready)
	cmd.Env = append(os.Environ(), workloadtest.Env+"=1")
	logs := &vitalstest.Buffer{}
	cmd.Stderr = logs
	// A workload left behind by a failed test holds the output open.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); killWorkload(ready) })
	pidIn(t, ready)
	waitReadyzIs(t, addr, 200, logs)
	for range 40 {
		time.Sleep(50 * time.Millisecond)
		if code := readyz(addr); code != 200 {
			t.Fatalf("readyz %d; logs:\n%s", code, logs)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exited(t, cmd); code != 143 {
		t.Fatalf("exit %d; logs:\n%s", code, logs)
	}
	if strings.Contains(logs.String(), "check failed") {
		t.Fatalf("the exec check failed beside the reaper; logs:\n%s", logs)
	}
}

// killWorkload kills what a failed test left running: the workload whose
// pid is in ready, with its group.
func killWorkload(ready string) {
	if b, err := os.ReadFile(ready); err == nil {
		if pid, _ := strconv.Atoi(string(b)); pid > 0 {
			syscall.Kill(-pid, syscall.SIGKILL)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func TestRunWantsTheWorkloadsCommandAfterDashDash(t *testing.T) {
	path := writeConfig(t, "service: {restart: always}\nchecks:\n  a: {heartbeat: {ttl: 1s}}\n")
	vitalsRun(t, "run", "-c", path).expect(t, 2, "", path+": service: no command: give service.command, or the command after --")
	vitalsRun(t, "run", "-c", path, "sleep").expect(t, 2, "", `unexpected argument "sleep": give the workload's command after --`)
}

//go:build !vitals_probe

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/agent"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/api"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
)

// vitalsAPI runs one of the API commands as Main would: the same error to
// exit code mapping, on a root of its own until root.go adds the commands.
func vitalsAPI(stdout, stderr io.Writer, args ...string) int {
	root := &cobra.Command{Use: "vitals", SilenceErrors: true, SilenceUsage: true}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return err })
	root.AddCommand(newAPICommands(stdout, stderr)...)
	root.SetArgs(args)
	_, err := root.ExecuteC()
	var f failed
	switch {
	case err == nil:
		return exitPass
	case errors.As(err, &f):
		fmt.Fprintln(stderr, f.msg)
		return exitFail
	default:
		fmt.Fprintf(stderr, "vitals: %v\n", err)
		return exitUsage
	}
}

type outcome struct {
	code           int
	stdout, stderr string
}

func vitals(args ...string) outcome {
	var stdout, stderr bytes.Buffer
	code := vitalsAPI(&stdout, &stderr, args...)
	return outcome{code, stdout.String(), stderr.String()}
}

func (o outcome) expect(t *testing.T, code int, stdout, stderr string) {
	t.Helper()
	if o.code != code || !strings.Contains(o.stdout, stdout) || !strings.Contains(o.stderr, stderr) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s\nwant exit %d, stdout with %q, stderr with %q", o.code, o.stdout, o.stderr, code, stdout, stderr)
	}
}

// eventually runs a command until it has the outcome wanted.
func eventually(t *testing.T, code int, stdout, stderr string, args ...string) outcome {
	t.Helper()
	var o outcome
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if o = vitals(args...); o.code == code && strings.Contains(o.stdout, stdout) && strings.Contains(o.stderr, stderr) {
			return o
		}
	}
	o.expect(t, code, stdout, stderr)
	return o
}

// runAgent runs c as vitals run does, with no workload, until ctx ends.
func runAgent(ctx context.Context, c *config.Config, logger *slog.Logger) error {
	a, err := agent.New(c, agent.Options{Logger: logger})
	if err != nil {
		return err
	}
	_, err = a.Run(ctx)
	return err
}

// testAgent is an agent running a configuration, as vitals run does.
type testAgent struct {
	listen string // the probe endpoints' address
	stop   func() error
	logs   *vitalstest.Buffer
}

func startAgent(t *testing.T, yaml string) *testAgent {
	t.Helper()
	c, err := config.Parse("vitals.yaml", []byte(yaml), os.LookupEnv, kinds.All)
	if err != nil {
		t.Fatal(err)
	}
	a := &testAgent{logs: &vitalstest.Buffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- runAgent(ctx, c, slog.New(slog.NewTextHandler(a.logs, nil))) }()
	var once sync.Once
	var err2 error
	a.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err2 = <-served:
			case <-time.After(20 * time.Second):
				err2 = errors.New("the agent did not return within 20s")
			}
		})
		return err2
	}
	t.Cleanup(func() { a.stop() })
	listen := regexp.MustCompile(`listen=(\S+)`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if m := listen.FindStringSubmatch(a.logs.String()); m != nil {
			a.listen = m[1]
			return a
		}
		select {
		case err := <-served:
			t.Fatalf("the agent returned %v; logs:\n%s", err, a.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent is not running after 10s; logs:\n%s", a.logs.String())
		}
	}
}

func TestTheAPICommandsAgainstARealAgent(t *testing.T) {
	dir := vitalstest.ShortDir(t)
	sock, conf := filepath.Join(dir, "run", "vitals.sock"), filepath.Join(dir, "peer1.conf")
	a := startAgent(t, fmt.Sprintf(`
listen: 127.0.0.1:0
api: %s
checks:
  peer-config:
    file: {path: %s, non-empty: true}
    period: 50ms
    failure-threshold: 1
  work-loop:
    level: live
    heartbeat: {ttl: 1h}
`, sock, conf))
	t.Setenv("VITALS_API", sock)
	missing := "stat " + conf + ": no such file or directory"

	// health: exit 1 with every reason while not ready, 0 once ready.
	eventually(t, 1, "", "readyz check failed: peer-config failed: "+missing+"\n", "health")
	vitals("health", "--level", "live").expect(t, 0, "livez check passed\n", "")
	vitals("health", "--level", "sometimes").expect(t, 2, "", `vitals: --level: unknown level "sometimes"`)
	vitals("health", "-o", "json").expect(t, 1, `"level": "ready",`+"\n"+`  "ok": false,`, "readyz check failed")

	// checks: a table, JSON, YAML, one level.
	o := vitals("checks")
	o.expect(t, 0, "NAME         LEVEL  KIND       STATUS   FOR  RUNS  LAST\n", "")
	if !regexp.MustCompile(`(?m)^peer-config  ready  file       fail     \d+s +\d+ +failed: `+regexp.QuoteMeta(missing)+`$`).MatchString(o.stdout) ||
		!strings.Contains(o.stdout, "\nwork-loop    live   heartbeat  pending  -    0     -\n") {
		t.Fatalf("table:\n%s", o.stdout)
	}
	var checks []client.Check
	o = vitals("checks", "-o", "json")
	if err := json.Unmarshal([]byte(o.stdout), &checks); err != nil || len(checks) != 2 || checks[0].Period != client.Duration(50*time.Millisecond) {
		t.Fatalf("checks -o json: %v\n%s", err, o.stdout)
	}
	vitals("checks", "-o", "yaml").expect(t, 0, "- name: peer-config\n  level: ready\n  kind: file\n  status: fail\n", "")
	o = vitals("checks", "--level", "live")
	if o.code != 0 || strings.Contains(o.stdout, "peer-config") || !strings.Contains(o.stdout, "work-loop") {
		t.Fatalf("--level live: %+v", o)
	}
	vitals("checks", "-o", "xml").expect(t, 2, "", `vitals: invalid argument "xml" for "-o, --output" flag: use text, wide, json or yaml`)

	// check: exit by status; --run exits by the run; an unknown check exits 2.
	o = vitals("check", "peer-config")
	o.expect(t, 1, "name:          peer-config\nlevel:         ready\nkind:          file\nstatus:        fail for ", "peer-config: fail: "+missing+"\n")
	o.expect(t, 1, "history, oldest first:\n  ", "")
	vitals("check", "nope").expect(t, 2, "", "vitals: no such check \"nope\"\n")
	vitals("check", "a", "b").expect(t, 2, "", "accepts 1 arg(s), received 2")
	if err := os.WriteFile(conf, []byte("[Peer]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o = vitals("check", "peer-config", "--run")
	o.expect(t, 0, "run:           ok in ", "")
	o.expect(t, 0, "status:        pass for ", "")
	var ran struct {
		Result client.Result `json:"result"`
		Check  client.Check  `json:"check"`
	}
	o = vitals("check", "peer-config", "--run", "-o", "json")
	if err := json.Unmarshal([]byte(o.stdout), &ran); err != nil || o.code != 0 || !ran.Result.OK || ran.Check.Name != "peer-config" || len(ran.Check.History) == 0 {
		t.Fatalf("--run -o json: %v %+v", err, o)
	}
	eventually(t, 0, "readyz check passed\n", "", "health")

	// beat: quiet; a heartbeat passes; a check that is none exits 2.
	vitals("beat", "work-loop").expect(t, 0, "", "")
	eventually(t, 0, "status:        pass for ", "", "check", "work-loop")
	vitals("beat", "peer-config").expect(t, 2, "", `vitals: check "peer-config" is a file check, not a heartbeat`)
	vitals("beat", "nope").expect(t, 2, "", `vitals: no such check "nope"`)

	// events: every kept one, those after an id, JSON lines.
	o = vitals("events")
	o.expect(t, 0, "  check-failed  peer-config (ready) pending -> fail: "+missing+"\n", "")
	o.expect(t, 0, "  check-passed  work-loop (live) pending -> pass\n", "")
	lines := strings.Split(strings.TrimSpace(o.stdout), "\n")
	var lastID uint64
	fmt.Sscan(lines[len(lines)-1], &lastID)
	o = vitals("events", "--after", fmt.Sprint(lastID-1), "-o", "json")
	var e health.Event
	if err := json.Unmarshal([]byte(o.stdout), &e); err != nil || o.code != 0 || e.ID != lastID || strings.Count(o.stdout, "\n") != 1 {
		t.Fatalf("events --after %d -o json: %v %+v", lastID-1, err, o)
	}

	// A failing run exits 1 and says why.
	os.Remove(conf)
	vitals("check", "peer-config", "--run").expect(t, 1, "run:           failed in ", "peer-config: "+missing+"\n")

	// No agent there: exit 1.
	vitals("checks", "--api", filepath.Join(dir, "none.sock")).expect(t, 1, "",
		"vitals checks: reach the agent at "+filepath.Join(dir, "none.sock")+": dial unix ")

	// /metrics beside the probe endpoints.
	res, err := http.Get("http://" + a.listen + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`vitals_check_up{check="work-loop",level="live"} 1`,
		`vitals_check_status{check="work-loop",status="pass"} 1`,
		`vitals_check_transitions_total{check="peer-config",to="fail"} `,
		`vitals_level_up{level="live"} 1`,
		`vitals_check_duration_seconds_count{check="peer-config"} `,
		"go_goroutines ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics has no %q:\n%s", want, body)
		}
	}

	// events --follow prints new events until interrupted, then exits 0.
	var out vitalstest.Buffer
	followed := make(chan int, 1)
	go func() { followed <- vitalsAPI(&out, io.Discard, "events", "--follow", "--after", fmt.Sprint(lastID)) }()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "check-failed  peer-config"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("events --follow printed no new event within 10s: %q", out.String())
		}
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT) // the command's handler has been set since before its first request
	select {
	case code := <-followed:
		if code != 0 {
			t.Fatalf("events --follow exited %d on an interrupt", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("events --follow did not stop within 10s of an interrupt")
	}

	// Following when the agent stops: it says stopping, and the command ends, 0.
	out = vitalstest.Buffer{}
	go func() {
		followed <- vitalsAPI(&out, io.Discard, "events", "-f", "-o", "json", "--after", fmt.Sprint(lastID+1))
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), `"id":`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("events -f printed nothing within 10s")
		}
	}
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-followed:
		if code != 0 || !strings.Contains(out.String(), `"type":"stopping"`) {
			t.Fatalf("events -f exited %d when the agent stopped, having printed:\n%s", code, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("events -f did not end within 10s of the agent stopping")
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("the socket is left after the agent stopped: %v", err)
	}
}

func TestTheAPICommandsOverTCPWithAToken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "tcp://" + ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600)
	startAgent(t, fmt.Sprintf("listen: 127.0.0.1:0\napi: %s\napi-token-file: %s\nchecks:\n  loop: {heartbeat: {ttl: 1h}}\n", addr, tokenFile))

	vitals("beat", "loop", "--api", addr, "--api-token-file", tokenFile).expect(t, 0, "", "")
	vitals("checks", "--api", addr).expect(t, 2, "", "vitals: this API needs a bearer token")
	t.Setenv("VITALS_API_TOKEN", "s3cre")
	vitals("checks", "--api", addr).expect(t, 2, "", "vitals: wrong bearer token")
	t.Setenv("VITALS_API_TOKEN", "s3cret")
	t.Setenv("VITALS_API", addr)
	eventually(t, 0, "readyz check passed", "", "health")
	vitals("checks", "--api-token-file", filepath.Join(dir, "none")).expect(t, 2, "", "vitals: --api-token-file: open ")
}

func TestRunNeedsItsTokenFileAndAFreeSocket(t *testing.T) {
	dir := vitalstest.ShortDir(t)
	// The loader reads the token file, so a file that validates is one whose API starts.
	_, err := config.Parse("vitals.yaml", []byte(fmt.Sprintf("api: tcp://127.0.0.1:1\napi-token-file: %s\nchecks:\n  loop: {heartbeat: {ttl: 1h}}\n",
		filepath.Join(dir, "none"))), os.LookupEnv, kinds.All)
	if err == nil || err.Error() != "vitals.yaml:2:17: api-token-file: open "+filepath.Join(dir, "none")+": no such file or directory" {
		t.Fatalf("%v", err)
	}

	sock := filepath.Join(dir, "vitals.sock")
	taken, err := api.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	go func() {
		for {
			c, err := taken.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	c, err := config.Parse("vitals.yaml", []byte(fmt.Sprintf("listen: 127.0.0.1:0\napi: %s\nchecks:\n  loop: {heartbeat: {ttl: 1h}}\n", sock)), os.LookupEnv, kinds.All)
	if err != nil {
		t.Fatal(err)
	}
	err = runAgent(context.Background(), c, slog.New(slog.DiscardHandler))
	if !errors.As(err, new(*agent.RunError)) || err.Error() != "vitals run: serve the management API on "+sock+" (api: in vitals.yaml): something answers on "+sock+" already: is another vitals running?" {
		t.Fatalf("%v", err)
	}
}

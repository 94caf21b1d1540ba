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
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/agent"
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

// apiAgent is the agent the commands' tests ask, its management API on a
// socket that VITALS_API names: its file check peer-config fails until its
// file (conf) is there, and its heartbeat work-loop is pending until it is
// beaten.
type apiAgent struct {
	*testAgent
	dir, sock, conf string
	// missing is what peer-config says while conf is not there.
	missing string
}

// startAPIAgent starts an apiAgent, stopped when the test ends, and waits
// for peer-config's first run to fail, so that each test begins from the
// same state.
func startAPIAgent(t *testing.T) *apiAgent {
	t.Helper()
	dir := vitalstest.ShortDir(t)
	sock, conf := filepath.Join(dir, "run", "vitals.sock"), filepath.Join(dir, "peer1.conf")
	a := &apiAgent{dir: dir, sock: sock, conf: conf, missing: "stat " + conf + ": no such file or directory"}
	a.testAgent = startAgent(t, fmt.Sprintf(`
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
	waitStatus(t, "peer-config", health.Fail)
	return a
}

// waitStatus waits until the agent lists check with status.
func waitStatus(t *testing.T, check string, status health.Status) {
	t.Helper()
	var o outcome
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var checks []client.Check
		o = vitals("checks", "-o", "json")
		if json.Unmarshal([]byte(o.stdout), &checks) == nil &&
			slices.ContainsFunc(checks, func(c client.Check) bool { return c.Name == check && c.Status == status }) {
			return
		}
	}
	t.Fatalf("%s is not %s after 10s: %+v", check, status, o)
}

// writeConf makes peer-config's file, so that it passes from its next run.
func (a *apiAgent) writeConf(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(a.conf, []byte("[Peer]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// lastEventID is the id of the latest event the agent kept.
func lastEventID(t *testing.T) uint64 {
	t.Helper()
	o := vitals("events")
	lines := strings.Split(strings.TrimSpace(o.stdout), "\n")
	var id uint64
	if _, err := fmt.Sscan(lines[len(lines)-1], &id); err != nil {
		t.Fatalf("events: %v\n%s", err, o.stdout)
	}
	return id
}

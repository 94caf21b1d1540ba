package vitalstest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/internal/testenv"
)

// pebblePatience bounds the waits for Pebble: long, for a loaded machine; a
// test that passes never waits that long.
const pebblePatience = 20 * time.Second

// benchDir is the repository's bench module, whose go.mod pins the Pebble
// that the benchmarks compare vitals with (a tool directive), from this
// file's place in the repository.
func benchDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "bench")
}

// PebbleVersion is the version of Pebble that the bench module requires, as
// its go.mod says.
func PebbleVersion() (string, error) {
	mod, err := os.ReadFile(filepath.Join(benchDir(), "go.mod"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/canonical/pebble (v\S+)`).FindSubmatch(mod)
	if m == nil {
		return "", fmt.Errorf("bench/go.mod requires no github.com/canonical/pebble")
	}
	return string(m[1]), nil
}

var pebbleOnce struct {
	sync.Once
	path string
	err  error
}

// PebbleBinary is the pebble command at PebbleVersion, built the way bench
// builds it (go build of its tool, in the bench module) into the user's
// cache directory (testenv.Tool), once for each version, and returns its
// path.
func PebbleBinary(t testing.TB) string {
	t.Helper()
	pebbleOnce.Do(func() { pebbleOnce.path, pebbleOnce.err = buildPebble() })
	if pebbleOnce.err != nil {
		t.Fatal(pebbleOnce.err)
	}
	return pebbleOnce.path
}

func buildPebble() (string, error) {
	version, err := PebbleVersion()
	if err != nil {
		return "", err
	}
	return testenv.Tool("pebble", version, func(path string) error {
		build := exec.Command("go", "build", "-o", path, "github.com/canonical/pebble/cmd/pebble")
		build.Dir = benchDir()
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("build pebble %s in bench: %v\n%s", version, err, out)
		}
		return nil
	})
}

// A Pebble is a `pebble run` that a test started: its $PEBBLE directory,
// its API's socket there, and its output.
type Pebble struct {
	Binary string
	Dir    string // $PEBBLE: layers/, .pebble.state, .pebble.socket
	Socket string
	// HTTP, when set before Start, is the address of `pebble run --http`:
	// Pebble's open API, whose GET /v1/health Juju's probes ask.
	HTTP   string
	Log    *Buffer
	client *http.Client
}

// NewPebble makes a new $PEBBLE directory whose one layer is layer (none
// when empty), for a Pebble that Start starts.
func NewPebble(t testing.TB, layer string) *Pebble {
	t.Helper()
	p := &Pebble{Binary: PebbleBinary(t), Dir: ShortDir(t), Log: &Buffer{}}
	p.Socket = filepath.Join(p.Dir, ".pebble.socket")
	if err := os.MkdirAll(filepath.Join(p.Dir, "layers"), 0o755); err != nil {
		t.Fatal(err)
	}
	if layer != "" {
		if err := os.WriteFile(filepath.Join(p.Dir, "layers", "001-test.yaml"), []byte(layer), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.client = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", p.Socket)
	}}}
	return p
}

// StartPebble is NewPebble, started.
func StartPebble(t testing.TB, layer string, env ...string) *Pebble {
	t.Helper()
	p := NewPebble(t, layer)
	p.Start(t, env...)
	return p
}

// Start starts `pebble run` in p's directory, with env added to the
// environment; it returns once Pebble answers on its socket, and stops
// Pebble (SIGTERM, which stops its services too) when the test ends.
func (p *Pebble) Start(t testing.TB, env ...string) {
	t.Helper()
	args := []string{"run", "--verbose"}
	if p.HTTP != "" {
		args = append(args, "--http", p.HTTP)
	}
	cmd := exec.Command(p.Binary, args...)
	cmd.Env = append(p.environ(), env...)
	cmd.Stdout, cmd.Stderr = p.Log, p.Log
	cmd.WaitDelay = 2 * time.Second // a service left behind holds the output open
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		p.client.CloseIdleConnections()
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(pebblePatience):
			cmd.Process.Kill()
			<-done
		}
	})
	p.WaitFor(t, "Pebble answering on "+p.Socket, func() bool {
		var health any
		return p.get("/v1/health", &health) == nil
	})
}

// environ is the environment of p's commands: the test's, with $PEBBLE
// p's directory, no other Pebble's socket, and $XDG_CONFIG_HOME in p's
// directory too, where `pebble notices` keeps what it listed.
func (p *Pebble) environ() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "PEBBLE=") || strings.HasPrefix(kv, "PEBBLE_SOCKET=") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=")
	})
	return append(env, "PEBBLE="+p.Dir, "XDG_CONFIG_HOME="+filepath.Join(p.Dir, "config"))
}

// WaitFor waits (a guard only) until ok, failing the test with Pebble's
// output after pebblePatience.
func (p *Pebble) WaitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(pebblePatience)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v; Pebble's output:\n%s", what, pebblePatience, p.Log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// PebbleNotice is a notice as Pebble's API shows it (GET /v1/notices).
type PebbleNotice struct {
	ID            string            `json:"id"`
	UserID        *uint32           `json:"user-id"`
	Type          string            `json:"type"`
	Key           string            `json:"key"`
	FirstOccurred time.Time         `json:"first-occurred"`
	Occurrences   int               `json:"occurrences"`
	LastData      map[string]string `json:"last-data"`
	RepeatAfter   string            `json:"repeat-after"`
	LastRepeated  time.Time         `json:"last-repeated"`
}

// Notices is the custom notices Pebble has, each with its last data, in
// the order they last repeated; those of keys only, when keys are given.
func (p *Pebble) Notices(t testing.TB, keys ...string) []PebbleNotice {
	t.Helper()
	q := url.Values{"types": {"custom"}}
	if len(keys) > 0 {
		q.Set("keys", strings.Join(keys, ","))
	}
	var notices []PebbleNotice
	if err := p.get("/v1/notices?"+q.Encode(), &notices); err != nil {
		t.Fatalf("%v; Pebble's output:\n%s", err, p.Log)
	}
	return notices
}

// get reads the result of GET path on Pebble's API into result.
func (p *Pebble) get(path string, result any) error {
	resp, err := p.client.Get("http://localhost" + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var answer struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		return fmt.Errorf("GET %s: %s: %w", path, resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, answer.Result)
	}
	return json.Unmarshal(answer.Result, result)
}

// CLI runs the pebble command with args against this Pebble, as a user
// would, and returns its output; a failure fails the test.
func (p *Pebble) CLI(t testing.TB, args ...string) string {
	t.Helper()
	out, code := p.CLIExit(t, args...)
	if code != 0 {
		t.Fatalf("pebble %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// CLIExit is CLI for a command whose exit code says something (pebble
// health): its output and exit code; only a command that cannot run fails
// the test.
func (p *Pebble) CLIExit(t testing.TB, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(p.Binary, args...)
	cmd.Env = p.environ()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatalf("pebble %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

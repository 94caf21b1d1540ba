package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/bench/internal/harness"
)

func init() {
	register(experiment{
		ID:   "P1",
		What: "/readyz throughput and p99 latency with 50 ready checks: the agent and the library server, against bare net/http and the peers",
		Run:  runP1,
	})
}

const (
	p1Checks = 50
	// p1Conns is how many keep-alive connections the load generator holds
	// open: enough to keep one server core busy whatever the handler costs,
	// few enough that queueing does not swamp the p99.
	p1Conns = 16
	// The server runs on one core and the load generator on the other, so
	// that they do not compete (the machine has two).
	p1ServerCPU = 0
	p1LoadCPU   = 1
	// p1Slices is how many one-second loads each server gets per round.
	p1Slices = 10
)

// A p1Server is one program answering the readiness probe in P1.
type p1Server struct {
	name  string // as the table names it
	peer  bool   // a peer, rather than vitals or the limit
	agent bool   // a peer that is an agent, as `vitals run` is: Pebble
	path  string // the readiness URL's path and query
	want  string // what a passing answer's body holds
	// start starts it on addr, with its files (if any) under dir.
	start func(ctx context.Context, env *harness.Env, dir, addr string) (*harness.Proc, error)
	// verify checks, once it answers, that it has its 50 checks and they pass.
	verify func(ctx context.Context, env *harness.Env, base, dir string) error
}

// p1Servers are the servers in the order each round measures them.
func p1Servers(checkAddr string) []p1Server {
	server := func(name string, args ...string) func(context.Context, *harness.Env, string, string) (*harness.Proc, error) {
		return func(ctx context.Context, env *harness.Env, dir, addr string) (*harness.Proc, error) {
			bin, err := env.Build(ctx, "server-"+name, "bench", "./servers/"+name)
			if err != nil {
				return nil, err
			}
			argv := append([]string{bin, "-addr", addr, "-checks", strconv.Itoa(p1Checks)}, args...)
			return env.Start(dir, nil, p1ServerCPU, argv...)
		}
	}
	verbose := p1CountLines("/readyz?verbose", "[+]check-")
	details := p1CountLines("/readyz", `"check-`)
	return []p1Server{
		{name: "bare net/http", path: "/readyz", want: "ok", start: server("bare")},
		{name: "the library server (bench/servers/vitals)", path: "/readyz", want: "ok", start: server("vitals"), verify: verbose},
		{name: "the agent (`vitals run`)", path: "/readyz", want: "ok", start: p1StartAgent,
			verify: func(ctx context.Context, env *harness.Env, base, dir string) error {
				if err := verbose(ctx, env, base, dir); err != nil {
					return err
				}
				_, err := harness.Get(base + "/metrics") // mounted, as by default
				return err
			}},
		{name: "controller-runtime healthz", peer: true, path: "/readyz", want: "ok", start: server("controllerruntime"), verify: verbose},
		{name: "Pebble", peer: true, agent: true, path: "/v1/health?level=ready", want: `"healthy":true`,
			start: func(ctx context.Context, env *harness.Env, dir, addr string) (*harness.Proc, error) {
				return startPebble(ctx, env, dir, p1PebbleLayer(checkAddr), addr, p1ServerCPU)
			},
			verify: p1PebbleChecks},
		{name: "alexliesenfeld/health (periodic)", peer: true, path: "/readyz", want: `"status":"up"`, start: server("alexliesenfeld"), verify: details},
		{name: "alexliesenfeld/health (default: synchronous)", peer: true, path: "/readyz", want: `"status":"up"`, start: server("alexliesenfeld", "-sync"), verify: details},
	}
}

// p1Result is one server's figures over the rounds.
type p1Result struct {
	perSecond []float64
	p99       []time.Duration
	cpu       []time.Duration // the server's CPU time per request
	tool      string
}

func runP1(ctx context.Context, env *harness.Env) ([]harness.Row, error) {
	dir, err := os.MkdirTemp("", "bench-p1")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	// Pebble's tcp checks dial this listener (once an hour: their first run
	// is one period after start, so never during a measurement).
	checkLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer checkLn.Close()
	go func() {
		for {
			c, err := checkLn.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()

	servers := p1Servers(checkLn.Addr().String())
	results := make([]p1Result, len(servers))
	for round := range env.Rounds {
		if err := p1Round(ctx, env, servers, results, filepath.Join(dir, strconv.Itoa(round))); err != nil {
			return nil, err
		}
		for i, s := range servers {
			r := &results[i]
			env.Logf("P1 round %d: %-45s %9.0f req/s  p99 %-9v  CPU %v/request", round+1, s.name, r.perSecond[round], r.p99[round], r.cpu[round])
		}
	}
	return p1Rows(servers, results), nil
}

// p1Round starts every server, checks that each passes, warms each up, then
// loads them in turn, one second each, until each had p1Slices seconds (one
// with -quick): on a shared machine whose speed drifts from second to
// second, the drift then hits every server alike. It appends each server's
// figures over its seconds to results: requests per second, the median of
// the seconds' p99 latencies, and the server's CPU time per request (which
// time that other processes take on the server's core moves less than it
// moves the throughput).
func p1Round(ctx context.Context, env *harness.Env, servers []p1Server, results []p1Result, dir string) error {
	procs := make([]*harness.Proc, len(servers))
	urls := make([]string, len(servers))
	defer func() {
		for _, p := range procs {
			if p != nil {
				p.Stop(5 * time.Second)
			}
		}
	}()
	for i, s := range servers {
		p, url, err := p1Start(ctx, env, s, filepath.Join(dir, strconv.Itoa(i)))
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		procs[i], urls[i] = p, url
		if !env.Quick {
			if _, err := env.Load(ctx, url, p1LoadCPU, p1Conns, 2*time.Second); err != nil {
				return fmt.Errorf("%s: warm-up: %w", s.name, err)
			}
		}
	}
	seconds := p1Slices
	if env.Quick {
		seconds = 1
	}
	requests := make([]int, len(servers))
	busy := make([]time.Duration, len(servers))
	cpu := make([]time.Duration, len(servers))
	p99 := make([][]time.Duration, len(servers))
	for second := range seconds {
		for j := range servers {
			// Each second starts with the next server, so that none always
			// follows the same one.
			i := (j + second) % len(servers)
			s := servers[i]
			if ctx.Err() != nil {
				return ctx.Err()
			}
			before, err := procs[i].Now()
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			t, err := env.Load(ctx, urls[i], p1LoadCPU, p1Conns, time.Second)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			after, err := procs[i].Now()
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			requests[i] += t.Requests
			busy[i] += time.Duration(float64(t.Requests) / t.PerSecond * float64(time.Second))
			cpu[i] += after.CPU - before.CPU
			p99[i] = append(p99[i], t.P99)
			results[i].tool = t.Tool
		}
	}
	for i := range servers {
		r := &results[i]
		r.perSecond = append(r.perSecond, float64(requests[i])/busy[i].Seconds())
		r.p99 = append(r.p99, harness.Median(p99[i]))
		r.cpu = append(r.cpu, cpu[i]/time.Duration(max(1, requests[i])))
	}
	return nil
}

// p1Start starts s with its files in dir, waits until it answers 200 and
// checks that the answer and its checks are what P1 means to measure. It
// returns the process and the URL to load.
func p1Start(ctx context.Context, env *harness.Env, s p1Server, dir string) (*harness.Proc, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	addr, err := harness.LoopbackAddr()
	if err != nil {
		return nil, "", err
	}
	p, err := s.start(ctx, env, dir, addr)
	if err != nil {
		return nil, "", err
	}
	base := "http://" + addr
	url := base + s.path
	err = func() error {
		wait, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := harness.WaitHTTP(wait, p, url, http.StatusOK, 10*time.Millisecond); err != nil {
			return err
		}
		if body, err := harness.Get(url); err != nil {
			return err
		} else if !strings.Contains(body, s.want) {
			return fmt.Errorf("GET %s answered %q, want %q in it", url, body, s.want)
		}
		if s.verify != nil {
			return s.verify(ctx, env, base, dir)
		}
		return nil
	}()
	if err != nil {
		p.Stop(5 * time.Second)
		return nil, "", err
	}
	return p, url, nil
}

// p1Rows makes the table's rows: the agent's throughput against the limit
// (the target), the library server's against the limit, the agent's against
// the library server's, the library server's against the best peer (a target)
// and against each peer, and the agent's against Pebble's (the peer that is an
// agent); then the p99 latency and the server's CPU time per request of the
// agent against the limit and the library server, and of the library server
// against the limit and the peers.
func p1Rows(servers []p1Server, results []p1Result) []harness.Row {
	rate := make([]float64, len(servers))
	p99 := make([]time.Duration, len(servers))
	cpu := make([]time.Duration, len(servers))
	for i, r := range results {
		rate[i] = harness.Median(r.perSecond)
		p99[i] = harness.Median(r.p99)
		cpu[i] = harness.Median(r.cpu)
	}
	const bare, library, agent = 0, 1, 2
	best := -1
	for i, s := range servers {
		if s.peer && (best < 0 || rate[i] > rate[best]) {
			best = i
		}
	}
	perSecond := func(v float64) string { return fmt.Sprintf("%.0f req/s", v) }
	throughput := func(a, b int) harness.Row {
		return harness.Row{ID: "P1", What: "/readyz req/s: " + servers[a].name + " ÷ " + servers[b].name,
			Vitals: perSecond(rate[a]), Base: perSecond(rate[b]), Ratio: rate[a] / rate[b]}
	}
	atLeast := func(r harness.Row, what string, least float64) harness.Row {
		r.What, r.Target, r.Met = what, fmt.Sprintf("≥ %.1f×", least), r.Ratio >= least
		return r
	}
	latency := func(a, b int) harness.Row {
		return harness.Row{ID: "P1", What: "/readyz p99 latency: " + servers[a].name + " ÷ " + servers[b].name + " (lower is better)",
			Vitals: harness.Millis(p99[a], 2), Base: harness.Millis(p99[b], 2), Ratio: float64(p99[a]) / float64(p99[b])}
	}
	cost := func(a, b int) harness.Row {
		return harness.Row{ID: "P1", What: "/readyz server CPU per request: " + servers[a].name + " ÷ " + servers[b].name + " (lower is better)",
			Vitals: harness.Micros(cpu[a], 1), Base: harness.Micros(cpu[b], 1), Ratio: float64(cpu[a]) / float64(cpu[b])}
	}
	rows := []harness.Row{
		atLeast(throughput(agent, bare), fmt.Sprintf("/readyz req/s, %d checks (%s, %d conns): %s ÷ %s",
			p1Checks, results[agent].tool, p1Conns, servers[agent].name, servers[bare].name), 0.9),
		throughput(library, bare),
		throughput(agent, library),
		atLeast(throughput(library, best), "/readyz req/s: "+servers[library].name+" ÷ the best peer ("+servers[best].name+")", 1.3),
	}
	for i, s := range servers {
		if s.peer {
			rows = append(rows, throughput(library, i))
		}
	}
	for i, s := range servers {
		if s.agent {
			rows = append(rows, throughput(agent, i))
		}
	}
	rows = append(rows, latency(agent, bare), latency(agent, library), latency(library, bare))
	for i, s := range servers {
		if s.peer {
			rows = append(rows, latency(library, i))
		}
	}
	return append(rows, cost(agent, bare), cost(agent, library), cost(library, bare), cost(library, best))
}

// p1StartAgent starts `vitals run` pinned to the server's core with p1Checks
// ready checks of the file kind on its own vitals.yaml, period 1h: a file that
// exists passes, and a stat is the cheapest run of any kind (no connection,
// no process), so that, like the library server's checkers, they cost
// nothing beside the probe path; with period 1h they run once, at the start.
// Everything else is left at its default, as a user has it: /metrics and the
// status page mounted on the probe listener, the management API on a unix
// socket. Warnings only: the 50 "check passed" lines at the start would
// flood bench's log.
func p1StartAgent(ctx context.Context, env *harness.Env, dir, addr string) (*harness.Proc, error) {
	var b strings.Builder
	b.WriteString("checks:\n")
	for i := range p1Checks {
		fmt.Fprintf(&b, "  check-%02d:\n    file: {path: %q}\n    period: 1h\n", i, filepath.Join(dir, "vitals.yaml"))
	}
	return startVitals(ctx, env, vitalsRun{dir: dir, listen: addr, config: b.String(), cpu: p1ServerCPU,
		args: []string{"--log-level", "warn"}})
}

// p1PebbleLayer is a layer of 50 ready tcp checks on addr, period 1h.
func p1PebbleLayer(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	var b strings.Builder
	b.WriteString("summary: bench P1\nchecks:\n")
	for i := range p1Checks {
		fmt.Fprintf(&b, "  check-%02d:\n    override: replace\n    level: ready\n    period: 1h\n    tcp:\n      host: %s\n      port: %s\n", i, host, port)
	}
	return b.String()
}

// p1PebbleChecks asks Pebble over its socket (`pebble checks`, which its
// HTTP port does not serve without authentication) that it has the 50 ready
// checks, all up.
func p1PebbleChecks(ctx context.Context, env *harness.Env, _, dir string) error {
	pebble, err := buildPebble(ctx, env)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, pebble, "checks", "--level=ready")
	cmd.Env = append(os.Environ(), "PEBBLE="+filepath.Join(dir, "pebble"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pebble checks: %w\n%s", err, out)
	}
	up, status := 0, -1
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if status < 0 {
			status = slices.Index(f, "Status") // the header
			continue
		}
		if len(f) > status && strings.HasPrefix(f[0], "check-") && f[status] == "up" {
			up++
		}
	}
	if up != p1Checks {
		return fmt.Errorf("pebble checks lists %d ready checks up, want %d:\n%s", up, p1Checks, out)
	}
	return nil
}

// p1CountLines returns a verify function: GET path must hold want exactly
// 50 times (one per check).
func p1CountLines(path, want string) func(context.Context, *harness.Env, string, string) error {
	return func(_ context.Context, _ *harness.Env, base, _ string) error {
		body, err := harness.Get(base + path)
		if err != nil {
			return err
		}
		if n := strings.Count(body, want); n != p1Checks {
			return fmt.Errorf("GET %s lists %d checks (%q), want %d:\n%s", path, n, want, p1Checks, body)
		}
		return nil
	}
}

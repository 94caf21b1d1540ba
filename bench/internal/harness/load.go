package harness

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Throughput is what one load generator run measured against one URL.
type Throughput struct {
	// Tool is the load generator that measured: "wrk", or "Go load
	// generator" where wrk is not installed.
	Tool      string
	Requests  int           // requests completed
	PerSecond float64       // completed requests per second
	P99       time.Duration // 99th percentile of the requests' latency
}

// Load sends GET url over conns keep-alive connections for d from a load
// generator in a process of its own, pinned to cpu (see Pin): wrk (one
// thread) when it is installed, else bench's own generator
// (bench/servers/load), built on first use. It fails when any answer was not 2xx, or on a socket error.
func (e *Env) Load(ctx context.Context, url string, cpu, conns int, d time.Duration) (Throughput, error) {
	tool := "wrk"
	secs := max(1, int(d.Round(time.Second)/time.Second))
	argv := []string{"-t1", "-c" + strconv.Itoa(conns), "-d" + strconv.Itoa(secs) + "s", "--latency", url}
	if p, err := exec.LookPath("wrk"); err == nil {
		argv = append([]string{p}, argv...)
	} else {
		tool = "Go load generator"
		p, err := e.Build(ctx, "load", "bench", "./servers/load")
		if err != nil {
			return Throughput{}, err
		}
		argv = []string{p, "-c", strconv.Itoa(conns), "-d", d.String(), url}
	}
	argv = e.Pin(cpu, argv)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Throughput{}, fmt.Errorf("%s: %w\n%s%s", strings.Join(argv, " "), err, out, stderr.Bytes())
	}
	t, err := parseWrk(out)
	if err != nil {
		return Throughput{}, fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, out)
	}
	t.Tool = tool
	return t, nil
}

// parseWrk reads the summary of `wrk --latency`: the "N requests in" line,
// the "Requests/sec:" line and the "99%" line of the latency distribution. Non-2xx answers or socket
// errors make the run invalid: a server that fails its checks is not fast.
func parseWrk(out []byte) (Throughput, error) {
	var t Throughput
	var sawRate, sawP99 bool
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:"), strings.HasPrefix(line, "Socket errors:"):
			return t, fmt.Errorf("not every request succeeded: %s", line)
		case strings.HasPrefix(line, "Requests/sec:") && len(f) == 2:
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return t, fmt.Errorf("read %q: %w", line, err)
			}
			t.PerSecond, sawRate = v, true
		case len(f) >= 3 && f[1] == "requests" && f[2] == "in":
			n, err := strconv.Atoi(f[0])
			if err != nil {
				return t, fmt.Errorf("read %q: %w", line, err)
			}
			t.Requests = n
		case len(f) == 2 && f[0] == "99%":
			d, err := wrkDuration(f[1])
			if err != nil {
				return t, fmt.Errorf("read %q: %w", line, err)
			}
			t.P99, sawP99 = d, true
		}
	}
	if !sawRate || !sawP99 {
		return t, fmt.Errorf("no Requests/sec or 99%% line in the output")
	}
	return t, nil
}

// wrkDuration parses wrk's durations: "812.00us", "1.23ms", "2.01s", "1.00m".
func wrkDuration(s string) (time.Duration, error) {
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"us", time.Microsecond}, {"µs", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, err
			}
			return time.Duration(math.Round(f * float64(u.unit))), nil
		}
	}
	return 0, fmt.Errorf("unknown unit in %q", s)
}

// LoopbackAddr returns a free port on 127.0.0.1 ("127.0.0.1:PORT") for a
// server to listen on: the port is free now, and the kernel does not hand
// it out again at once.
func LoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

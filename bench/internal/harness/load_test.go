package harness

import (
	"strings"
	"testing"
	"time"
)

// wrkOutput is what `wrk -t1 -c4 -d1s --latency` printed (wrk 4.1.0).
const wrkOutput = `Running 1s test @ http://127.0.0.1:18081/readyz
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   319.98us  712.25us  12.64ms   94.43%
    Req/Sec    21.29k     5.19k   29.45k    70.00%
  Latency Distribution
     50%  122.00us
     75%  246.00us
     90%  687.00us
     99%    3.48ms
  21194 requests in 1.00s, 3.56MB read
Requests/sec:  21154.63
Transfer/sec:      3.55MB
`

func TestWrksSummaryGivesRequestsRateAndP99(t *testing.T) {
	got, err := parseWrk([]byte(wrkOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := Throughput{Requests: 21194, PerSecond: 21154.63, P99: 3480 * time.Microsecond}
	if got != want {
		t.Errorf("parseWrk = %+v, want %+v", got, want)
	}
}

func TestARunWithFailedRequestsIsNoMeasurement(t *testing.T) {
	for _, line := range []string{"  Non-2xx or 3xx responses: 12", "  Socket errors: connect 0, read 3, write 0, timeout 0"} {
		out := strings.Replace(wrkOutput, "Requests/sec:", line+"\nRequests/sec:", 1)
		if _, err := parseWrk([]byte(out)); err == nil || !strings.Contains(err.Error(), strings.TrimSpace(line)) {
			t.Errorf("with %q: parseWrk error = %v, want one quoting it", line, err)
		}
	}
	if _, err := parseWrk([]byte("unable to connect to 127.0.0.1:1 Connection refused\n")); err == nil {
		t.Error("parseWrk accepted output with no figures")
	}
}

func TestWrkDurations(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"812.00us": 812 * time.Microsecond,
		"812.00µs": 812 * time.Microsecond,
		"1.23ms":   1230 * time.Microsecond,
		"2.01s":    2010 * time.Millisecond,
		"1.50m":    90 * time.Second,
	} {
		if got, err := wrkDuration(in); err != nil || got != want {
			t.Errorf("wrkDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := wrkDuration("3 fortnights"); err == nil {
		t.Error(`wrkDuration("3 fortnights") did not fail`)
	}
}

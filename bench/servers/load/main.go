// Command load is the load generator bench falls back on where wrk is not
// installed: -c connections with keep-alive, each sending GET url in a loop
// for -d, then the same summary lines as `wrk --latency` (requests per
// second, the 99th percentile, non-2xx answers), so that one parser reads
// both.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/vitals-dev/vitals/bench/internal/harness"
)

func main() {
	conns := flag.Int("c", 32, "connections, each with one request in flight")
	d := flag.Duration("d", 10*time.Second, "how long to send requests")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: load [-c N] [-d DURATION] URL")
		os.Exit(2)
	}
	url := flag.Arg(0)

	var (
		mu        sync.Mutex
		latencies []time.Duration
		bad       int
		wg        sync.WaitGroup
	)
	start := time.Now()
	end := start.Add(*d)
	for range *conns {
		wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			var mine []time.Duration
			var notOK int
			for time.Now().Before(end) {
				t := time.Now()
				resp, err := client.Get(url)
				if err != nil {
					notOK++
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mine = append(mine, time.Since(t))
				if resp.StatusCode/100 != 2 {
					notOK++
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			bad += notOK
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	p99 := harness.Percentile(latencies, 99)
	fmt.Printf("  Latency Distribution\n     99%% %9.2fus\n", float64(p99)/float64(time.Microsecond))
	fmt.Printf("  %d requests in %.2fs\n", len(latencies), elapsed.Seconds())
	if bad > 0 {
		fmt.Printf("  Non-2xx or 3xx responses: %d\n", bad)
	}
	fmt.Printf("Requests/sec: %.2f\n", float64(len(latencies))/elapsed.Seconds())
}

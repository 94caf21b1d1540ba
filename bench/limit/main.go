// Command limit holds the bare programs of bench's P2, the experiment that
// measures what the vitals agent costs to run 100 http checks every second,
// and the target of their GETs.
//
//	limit -batch -n 100 -period 1s -timeout 1s 'http://127.0.0.1:PORT/c%d'
//
// is the floor: the cheapest Go program that makes the checks' GETs, as the
// kubelet's http probe makes them (a new connection each time, at most 10 KiB
// of the body read, the status looked at), with no state, no endpoints and no
// logs. One ticker for all of them: each tick fires the n GETs at once, each
// in a goroutine of its own, so that the runtime serves them in one wake-up.
// The URL's %d is the GET's number, 1 to n.
//
//	limit -n 100 -period 1s -timeout 1s 'http://127.0.0.1:PORT/c%d'
//
// is the same GETs spread evenly over the period, as the kubelet's probes
// and vitals's jittered checks end up: each of the n GETs has a goroutine and
// a ticker of its own, started period/n apart, so the runtime wakes once per
// GET.
//
//	limit -serve 127.0.0.1:PORT
//
// is the target every program of P2 sends its GETs to: 200 "ok" to every
// path, and GET /count answers how many requests (to other paths) and new
// connections it has seen, as "REQUESTS CONNECTIONS".
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// maxBody is what a GET reads of a body, as the kubelet's
// maxRespBodyLength: 10 KiB.
const maxBody = 10 << 10

func main() {
	serve := flag.String("serve", "", "serve the target on this address instead of sending GETs")
	n := flag.Int("n", 100, "how many GETs each period")
	period := flag.Duration("period", time.Second, "how often each GET is sent")
	timeout := flag.Duration("timeout", time.Second, "how long a GET may take")
	batch := flag.Bool("batch", false, "fire the n GETs together on one ticker, rather than spread over the period")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch {
	case *serve != "" && flag.NArg() == 0:
		err = target(ctx, *serve)
	case *serve == "" && flag.NArg() == 1 && strings.Contains(flag.Arg(0), "%d") && *n > 0 && *period > 0:
		get := spread
		if *batch {
			get = batched
		}
		get(ctx, urls(flag.Arg(0), *n), newClient(*timeout), *period)
	default:
		fmt.Fprintf(os.Stderr, "usage: limit [-batch] [-n 100] [-period 1s] [-timeout 1s] URL | limit -serve ADDR\n(the URL has one %%d, the GET's number)\n")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "limit:", err)
		os.Exit(1)
	}
}

// urls are the n GETs' URLs: pattern with %d replaced by 1 to n.
func urls(pattern string, n int) []string {
	us := make([]string, n)
	for i := range us {
		us[i] = fmt.Sprintf(pattern, i+1)
	}
	return us
}

// newClient is the one client every GET shares: keep-alive off, as the
// kubelet's http probe has it, so that each GET opens a new connection, as
// vitals's and Pebble's do.
func newClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true},
		Timeout:   timeout,
	}
}

// batched sends every GET of urls once a period until ctx ends, all of them
// at each tick of one ticker, each in a goroutine of its own: the fewest
// wake-ups that make the GETs, the first tick at once. A GET that outlives
// its period (it may not: the timeout is at most the period in P2) does not
// hold back the next tick's.
func batched(ctx context.Context, urls []string, client *http.Client, period time.Duration) {
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		for _, url := range urls {
			wg.Go(func() { report(getOnce(client, url)) })
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// spread sends every GET of urls once a period until ctx ends, spread evenly
// over the period: the kubelet starts each probe's worker at a random point
// of its first period, and vitals' jitter spreads checks begun together over
// theirs. Each GET has a goroutine and a ticker of its own, the i-th started
// period×i/n after the first, so the runtime wakes once per GET.
func spread(ctx context.Context, urls []string, client *http.Client, period time.Duration) {
	var wg sync.WaitGroup
	for i, url := range urls {
		offset := period * time.Duration(i) / time.Duration(len(urls))
		wg.Go(func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(offset):
			}
			tick := time.NewTicker(period)
			defer tick.Stop()
			for {
				report(getOnce(client, url))
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		})
	}
	wg.Wait()
}

// report writes a GET's error, if any, to stderr: the target answers every
// GET, so an error is news for whoever reads bench's log.
func report(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "limit:", err)
	}
}

// getOnce is one GET: the status must be 200-399, the kubelet's rule.
func getOnce(client *http.Client, url string) error {
	res, err := client.Get(url)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.ReadAll(io.LimitReader(res.Body, maxBody)); err != nil {
		return fmt.Errorf("GET %s: read body: %w", url, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 399 {
		return fmt.Errorf("GET %s: status %d", url, res.StatusCode)
	}
	return nil
}

// target serves the GETs on addr until ctx ends, counting them.
func target(ctx context.Context, addr string) error {
	var requests, conns atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /count", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "%d %d\n", requests.Load(), conns.Load())
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		},
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

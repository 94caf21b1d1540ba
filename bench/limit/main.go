// Command limit is the two bare programs of bench's P2, the experiment that
// measures what the vitals agent costs to run 100 http checks every second.
//
//	limit -n 100 -period 1s -timeout 1s 'http://127.0.0.1:PORT/c%d'
//
// is the floor: a Go program that does nothing but the checks' GETs, as the
// kubelet's http probe does them (a new connection each time, at most 10 KiB
// of the body read, the status looked at), with no state, no endpoints and no
// logs. Each of the n GETs has a goroutine and a ticker of its own, started
// period/n apart. The URL's %d is the GET's number, 1 to n.
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
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch {
	case *serve != "" && flag.NArg() == 0:
		err = target(ctx, *serve)
	case *serve == "" && flag.NArg() == 1 && strings.Contains(flag.Arg(0), "%d") && *n > 0 && *period > 0:
		err = get(ctx, flag.Arg(0), *n, *period, *timeout)
	default:
		fmt.Fprintf(os.Stderr, "usage: limit [-n 100] [-period 1s] [-timeout 1s] URL | limit -serve ADDR\n(the URL has one %%d, the GET's number)\n")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "limit:", err)
		os.Exit(1)
	}
}

// get sends n GETs every period until ctx ends, spread evenly over the
// period: the kubelet starts each probe's worker at a random point of its
// first period, and vitals' jitter spreads checks begun together over theirs.
// Fired all at once instead, 100 GETs cost about a third of the CPU time here,
// as the runtime then serves them in one wake-up rather than a hundred.
func get(ctx context.Context, pattern string, n int, period, timeout time.Duration) error {
	client := &http.Client{
		Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true},
		Timeout:   timeout,
	}
	var wg sync.WaitGroup
	for i := range n {
		url := fmt.Sprintf(pattern, i+1)
		offset := period * time.Duration(i) / time.Duration(n)
		wg.Go(func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(offset):
			}
			tick := time.NewTicker(period)
			defer tick.Stop()
			for {
				if err := getOnce(client, url); err != nil {
					fmt.Fprintln(os.Stderr, "limit:", err)
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		})
	}
	wg.Wait()
	return nil
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

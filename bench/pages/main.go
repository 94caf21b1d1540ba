// Command pages plays the status pages of bench's P6: browsers that have
// vitals's page open, and scripts that poll its JSON.
//
//	pages -follow 10 -poll 10 http://127.0.0.1:8558
//
// Each follower does what the page's script does: it follows the event
// stream (GET /ui/api/events, server-sent events) and reads the status
// (GET /ui/api/status) at once, then after every event and every 2s, on a
// connection of its own beside the stream's. Each poller reads the status
// every second. Bodies are read to their end and dropped. It runs until
// SIGTERM, then prints what it read as one line: statuses, events, errors.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The page's timings (cmd/vitals/internal/ui/assets/app.js).
const (
	refreshEvery = 2 * time.Second       // REFRESH_MS
	afterEvent   = 50 * time.Millisecond // refreshSoon
	pollEvery    = time.Second
)

var statuses, events, errs atomic.Int64

func main() {
	follow := flag.Int("follow", 10, "pages that follow the event stream")
	poll := flag.Int("poll", 10, "scripts that poll the status every second")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: pages [-follow N] [-poll N] http://HOST:PORT")
		os.Exit(2)
	}
	base := strings.TrimSuffix(flag.Arg(0), "/")
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	var wg sync.WaitGroup
	for range *follow {
		wg.Go(func() { follower(ctx, base) })
	}
	for range *poll {
		wg.Go(func() { poller(ctx, base) })
	}
	wg.Wait()
	fmt.Printf("statuses %d events %d errors %d\n", statuses.Load(), events.Load(), errs.Load())
}

// get reads the status on c.
func get(ctx context.Context, c *http.Client, base string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/ui/api/status", nil)
	res, err := c.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			errs.Add(1)
		}
		return
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		if ctx.Err() == nil {
			errs.Add(1)
		}
		return
	}
	statuses.Add(1)
}

func poller(ctx context.Context, base string) {
	c := &http.Client{Transport: &http.Transport{}}
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		get(ctx, c, base)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func follower(ctx context.Context, base string) {
	c := &http.Client{Transport: &http.Transport{}}
	news := make(chan struct{}, 1)
	go stream(ctx, base, news)
	refresh := time.NewTicker(refreshEvery)
	defer refresh.Stop()
	get(ctx, c, base)
	for {
		select {
		case <-ctx.Done():
			return
		case <-refresh.C:
		case <-news:
			select {
			case <-time.After(afterEvent):
			case <-ctx.Done():
				return
			}
		}
		get(ctx, c, base)
	}
}

// stream follows the event stream, saying on news when an event came.
func stream(ctx context.Context, base string, news chan<- struct{}) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/ui/api/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		if ctx.Err() == nil {
			errs.Add(1)
		}
		return
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		errs.Add(1)
		return
	}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			events.Add(1)
			select {
			case news <- struct{}{}:
			default:
			}
		}
	}
}

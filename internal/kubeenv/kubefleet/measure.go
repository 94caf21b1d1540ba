package kubefleet

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Figures are what Measure measured of a vitals fleet.
type Figures struct {
	// FirstPage is from the process's start to the end of its first
	// /api/fleet answer with every pod's row.
	FirstPage time.Duration
	// Update is from the end of a write of one pod's condition to the end
	// of the first /api/fleet answer that shows it, read after /api/stream
	// said there was a change.
	Update time.Duration
}

// guard bounds each wait of Measure: a vitals fleet that never answers
// fails the measure rather than hanging it. It is no bound on the figures.
const guard = time.Minute

// Measure measures the vitals fleet serving url, started at started, that
// watches f as Fill wrote it: its first full page, checked against f (each
// pod's Events, the failing pods), then an update as a user's page sees
// it: pod 1, which passes, written failing. Then pod 1 passes again, so
// that the next Measure finds f as it was written. gone, if not nil, says
// why the process cannot answer any more (it exited), which ends the
// measure at once.
func (c *Client) Measure(ctx context.Context, url string, started time.Time, f Fleet, gone func() error) (Figures, error) {
	var fig Figures
	if gone == nil {
		gone = func() error { return nil }
	}
	for deadline := time.Now().Add(guard); ; time.Sleep(5 * time.Millisecond) {
		v, read, err := page(url)
		if err == nil && len(v.Pods) == f.Pods {
			fig.FirstPage = read.Sub(started)
			if want := f.Events / f.Pods; v.Pods[0].EventCount != want {
				return fig, fmt.Errorf("the first page: %s has %d Events, want %d", v.Pods[0].Name, v.Pods[0].EventCount, want)
			}
			if f.FailingEvery > 0 {
				if want := (f.Pods + f.FailingEvery - 1) / f.FailingEvery; v.Summary.Failing != want {
					return fig, fmt.Errorf("the first page: %d failing, want %d", v.Summary.Failing, want)
				}
			}
			break
		}
		if err := gone(); err != nil {
			return fig, fmt.Errorf("before its first page: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return fig, err
		}
		if time.Now().After(deadline) {
			return fig, fmt.Errorf("no full page within %v of the start (the last answer: %v)", guard, err)
		}
	}

	stream, err := http.Get(url + "/api/stream")
	if err != nil {
		return fig, err
	}
	defer stream.Body.Close()
	changes := make(chan struct{}, 100)
	go func() {
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				changes <- struct{}{}
			}
		}
		close(changes)
	}()
	if _, ok := <-changes; !ok { // the version of now, at once
		return fig, fmt.Errorf("/api/stream ended at once")
	}
	// The first list's changes are told within the fleet's coalescing
	// (100 ms): a write before then would be told early, with them.
	for quiet := false; !quiet; {
		select {
		case <-changes:
		case <-time.After(300 * time.Millisecond):
			quiet = true
		}
	}
	name := Name(1)
	if f.FailingEvery == 1 {
		return fig, fmt.Errorf("every pod of the fleet fails: none to flip")
	}
	if err := c.SetCondition(ctx, f.Namespace, name, false); err != nil {
		return fig, err
	}
	written := time.Now()
	for {
		select {
		case _, ok := <-changes:
			if !ok {
				return fig, fmt.Errorf("/api/stream ended before it told the write")
			}
		case <-time.After(guard):
			return fig, fmt.Errorf("no change on /api/stream within %v of a write", guard)
		case <-ctx.Done():
			return fig, ctx.Err()
		}
		v, read, err := page(url)
		if err != nil {
			return fig, err
		}
		if len(v.Pods) > 1 && v.Pods[1].Name == name && v.Pods[1].Status == "failing" {
			fig.Update = read.Sub(written)
			return fig, c.SetCondition(ctx, f.Namespace, name, true)
		}
	}
}

// view is what Measure reads of /api/fleet.
type view struct {
	Summary struct{ Failing int }
	Pods    []struct {
		Name, Status string
		EventCount   int
	}
}

// page reads /api/fleet, and when its end was read; it decodes it after
// (decoding is no part of what a page waits for).
func page(url string) (view, time.Time, error) {
	var v view
	res, err := http.Get(url + "/api/fleet")
	if err != nil {
		return v, time.Time{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	read := time.Now()
	if err != nil {
		return v, read, err
	}
	if res.StatusCode != http.StatusOK {
		return v, read, fmt.Errorf("/api/fleet: %s", res.Status)
	}
	return v, read, json.Unmarshal(body, &v)
}

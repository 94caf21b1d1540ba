package kubefleet

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
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

// guard bounds each wait and each request of Measure: a vitals fleet that
// never answers fails the measure rather than hanging it. It is no bound
// on the figures.
const guard = time.Minute

// pageClient is how Measure reads /api/fleet: each answer within guard.
var pageClient = &http.Client{Timeout: guard}

// Measure measures the vitals fleet serving url, started at started, that
// watches f as Fill wrote it: its first full page, checked against f (each
// pod's Events, the failing pods), then an update as a user's page sees
// it: pod 1, which passes, written failing. Then pod 1 passes again, so
// that the next Measure finds f as it was written. gone, if not nil, says
// why the process cannot answer any more (it exited), which ends the
// measure at once.
func (c *Client) Measure(ctx context.Context, url string, started time.Time, f Fleet, gone func() error) (Figures, error) {
	var fig Figures
	if f.Pods < 2 || f.FailingEvery == 1 {
		return fig, errors.New("kubefleet: no passing pod 1 to write failing: a fleet of 2 pods or more, not all failing")
	}
	if f.Events%f.Pods != 0 {
		return fig, fmt.Errorf("kubefleet: %d Events over %d pods: the first page is checked for as many on each pod", f.Events, f.Pods)
	}
	if gone == nil {
		gone = func() error { return nil }
	}
	first, err := firstPage(ctx, url, f, gone)
	if err != nil {
		return fig, err
	}
	fig.FirstPage = first.Sub(started)
	fig.Update, err = c.update(ctx, url, f)
	return fig, err
}

// firstPage waits for the first full /api/fleet, checks it against f, and
// says when its end was read.
func firstPage(ctx context.Context, url string, f Fleet, gone func() error) (time.Time, error) {
	for deadline := time.Now().Add(guard); ; time.Sleep(5 * time.Millisecond) {
		v, read, err := page(ctx, url)
		if err == nil && len(v.Pods) == f.Pods {
			return read, check(v, f)
		}
		if err := gone(); err != nil {
			return read, fmt.Errorf("before its first page: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return read, err
		}
		if time.Now().After(deadline) {
			return read, fmt.Errorf("no full page within %v of the start (the last answer: %v)", guard, err)
		}
	}
}

// check says how a first page differs from what Fill wrote.
func check(v view, f Fleet) error {
	for _, p := range v.Pods {
		if want := f.Events / f.Pods; p.EventCount != want {
			return fmt.Errorf("the first page: %s has %d Events, want %d", p.Name, p.EventCount, want)
		}
	}
	if f.FailingEvery > 0 {
		if want := (f.Pods + f.FailingEvery - 1) / f.FailingEvery; v.Summary.Failing != want {
			return fmt.Errorf("the first page: %d failing, want %d", v.Summary.Failing, want)
		}
	}
	return nil
}

// update writes pod 1 failing once the first list's changes have been told,
// and measures until /api/fleet shows it, after /api/stream's change; then
// writes it passing again.
func (c *Client) update(ctx context.Context, url string, f Fleet) (time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/stream", nil)
	if err != nil {
		return 0, err
	}
	stream, err := http.DefaultClient.Do(req) // a stream: no timeout but ctx's
	if err != nil {
		return 0, err
	}
	defer stream.Body.Close()
	changes := make(chan struct{}, 100)
	go func() {
		defer close(changes)
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				select {
				case changes <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	select { // the version of now, at once
	case _, ok := <-changes:
		if !ok {
			return 0, errors.New("/api/stream ended at once")
		}
	case <-time.After(guard):
		return 0, fmt.Errorf("/api/stream said nothing within %v", guard)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	// The first list's changes are told within the fleet's coalescing
	// (100 ms): a write before then would be told early, with them.
	for quiet := false; !quiet; {
		select {
		case _, ok := <-changes:
			if !ok {
				return 0, errors.New("/api/stream ended before the first list's changes were told")
			}
		case <-time.After(300 * time.Millisecond):
			quiet = true
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	name := Name(1)
	if err := c.SetCondition(ctx, f.Namespace, name, false); err != nil {
		return 0, err
	}
	written := time.Now()
	for {
		select {
		case _, ok := <-changes:
			if !ok {
				return 0, errors.New("/api/stream ended before it told the write")
			}
		case <-time.After(guard):
			return 0, fmt.Errorf("no change on /api/stream within %v of a write", guard)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		v, read, err := page(ctx, url)
		if err != nil {
			return 0, err
		}
		if len(v.Pods) > 1 && v.Pods[1].Name == name && v.Pods[1].Status == "failing" {
			return read.Sub(written), c.SetCondition(ctx, f.Namespace, name, true)
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
func page(ctx context.Context, url string) (view, time.Time, error) {
	var v view
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/fleet", nil)
	if err != nil {
		return v, time.Time{}, err
	}
	res, err := pageClient.Do(req)
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

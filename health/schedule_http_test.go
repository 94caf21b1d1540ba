package health_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// A checker that forgets to close a response body: the run's context ending
// at return used to release the connection and its two goroutines.
// A checker that leaves an HTTP response open leaves nothing behind once
// its run ends: the transport's goroutines go with the run's context.
func TestRealtimeAnUnclosedResponseIsLetGoWhenTheRunEnds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 64<<10)) }))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{}}
	before := runtime.NumGoroutine()
	m := rtMonitor()
	m.Add(health.Check{Name: "web", Level: health.Ready, Period: 20 * time.Millisecond, Timeout: 20 * time.Millisecond,
		Checker: health.CheckerFunc(func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			_ = resp.StatusCode // body not closed: a common slip
			return nil
		})})
	start(t, m)
	waitRuns(t, m, "web", 50)
	waitFor(t, "the goroutines of 50 runs' open responses to end", func() bool { return runtime.NumGoroutine()-before <= 40 })
}

package harness

import (
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Target is a local HTTP server for the checks of a benchmark to GET: it
// answers 200 "ok" on every path, or 503 while it is failing.
type Target struct {
	// URL is its root, "http://127.0.0.1:PORT/".
	URL     string
	failing atomic.Bool
	srv     *http.Server
}

// StartTarget starts a Target on a free loopback port, passing.
func StartTarget() (*Target, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &Target{URL: "http://" + ln.Addr().String() + "/"}
	t.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if t.failing.Load() {
				http.Error(w, "flipped to failing", http.StatusServiceUnavailable)
				return
			}
			io.WriteString(w, "ok")
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go t.srv.Serve(ln)
	return t, nil
}

// SetFailing makes the target answer 503 from now on, or 200 again.
func (t *Target) SetFailing(failing bool) { t.failing.Store(failing) }

// Close stops the target and closes its connections.
func (t *Target) Close() { t.srv.Close() }

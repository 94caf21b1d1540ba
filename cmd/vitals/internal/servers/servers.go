// Package servers builds the agent's servers so that no client can take the
// descriptors the checks need: the probe endpoints (with /metrics), the
// management API and gRPC health each get timeouts that drop a client that
// holds a connection, and a listener whose connections are capped (Limit),
// the caps sized from RLIMIT_NOFILE (CapsFor) so that a reserve always stays
// for the checks, the workload and vitals itself. ProbeHandler is what the
// probe listener serves, the probe endpoints on a path of their own that
// costs no more than the library's handler alone.
//
// The agent's run command wires it; it imports nothing of the agent.
// RELIABILITY.md ("Servers: timeouts and limits") says each value and why.
package servers

import (
	"log"
	"net/http"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

const (
	// ReadHeaderTimeout bounds a request's headers: a client that connects
	// and sends nothing, or sends them byte by byte (slowloris), is dropped
	// after 5s, where a real client sends them in milliseconds.
	ReadHeaderTimeout = 5 * time.Second
	// ReadTimeout bounds a whole request, its body included: a client that
	// sends headers with a Content-Length and then not the body would
	// otherwise hold an active connection, one that no IdleTimeout ends and
	// no cap evicts, for as long as it likes (net/http reads the unread body
	// of an answered request before the next). Requests here carry a list
	// of names at most. Once the body is read the deadline is lifted: a
	// long wait or an event stream is not cut.
	ReadTimeout = 10 * time.Second
	// IdleTimeout closes a keep-alive connection with no request for 30s:
	// a scraper at the common 15s interval keeps its connection, and a
	// client that holds one gives its descriptor back within half a minute.
	// The kubelet opens a connection per probe and is not concerned.
	IdleTimeout = 30 * time.Second
	// WriteTimeout bounds writing an answer to a client that does not read
	// it. The probe endpoints answer from a snapshot and /metrics in
	// milliseconds; 10s is Prometheus's default scrape timeout. The API
	// re-arms it at every write (see API), so that a long wait for events or
	// an event stream is not cut, but a reader that stops reading is dropped.
	WriteTimeout = 10 * time.Second

	// grpcPingAfter is how long a gRPC connection with calls open (a Watch)
	// may stay silent before the server pings its client; grpcPingTimeout is
	// how long the client has to answer. Together they drop a peer that
	// vanished, or that stopped reading, from a Watch within 70s; the
	// defaults (2h, 20s) would keep it for hours.
	grpcPingAfter   = time.Minute
	grpcPingTimeout = 10 * time.Second
	// grpcMinPing is the shortest interval between a client's pings the
	// server accepts (its default, 5m, makes it close the connection of a
	// client that keeps its Watch alive through a proxy every 10s or more);
	// a client that pings faster is dropped (GOAWAY too_many_pings).
	grpcMinPing = 10 * time.Second
	// grpcMaxStreams bounds the calls open at once on one gRPC connection,
	// so that one client cannot hold any number of Watches: 100 is what the
	// HTTP/2 RFC asks a server to allow at least, and what most servers
	// advertise.
	grpcMaxStreams = 100
)

// Probe returns the server of the probe endpoints, /metrics and the status
// page on l: every answer is short, so WriteTimeout applies to the whole of
// it, but for the handlers wrapped in Rearmed (the status page's event
// streams).
func Probe(h http.Handler, l *Listener, errorLog *log.Logger) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: ReadHeaderTimeout, ReadTimeout: ReadTimeout, IdleTimeout: IdleTimeout,
		WriteTimeout: WriteTimeout, ConnState: l.ConnState, ErrorLog: errorLog}
}

// API returns the server of the management API on l. Its long waits
// (GET /v1/events?wait=, up to 5m), its event streams and the checks it runs
// on request take longer than WriteTimeout: the deadline is re-armed at every
// write of the answer, so that WriteTimeout bounds each write rather than the
// whole answer.
func API(h http.Handler, l *Listener, errorLog *log.Logger) *http.Server {
	return &http.Server{Handler: rearm(h, WriteTimeout), ReadHeaderTimeout: ReadHeaderTimeout, ReadTimeout: ReadTimeout,
		IdleTimeout: IdleTimeout, WriteTimeout: WriteTimeout, ConnState: l.ConnState, ErrorLog: errorLog}
}

// GRPC returns the options of the gRPC health server. Its listener is capped
// by Limit as the others are; a connection with no call open for IdleTimeout
// is closed (GOAWAY), while a Watch, a call that stays open by design, keeps
// its connection for as long as its client answers pings.
func GRPC() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ConnectionTimeout(ReadHeaderTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: IdleTimeout,
			Time:              grpcPingAfter,
			Timeout:           grpcPingTimeout,
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: grpcMinPing, PermitWithoutStream: true}),
		grpc.MaxConcurrentStreams(grpcMaxStreams),
	}
}

// Rearmed is h on the probe server for answers that last (the status
// page's event streams): the deadline is re-armed at every write, as on the
// API, so that WriteTimeout bounds each write rather than the whole answer.
func Rearmed(h http.Handler) http.Handler { return rearm(h, WriteTimeout) }

// rearm gives each write of h's answers d from the moment it starts, and the
// end of the answer (what net/http writes once h returns) too.
func rearm(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: d}
		h.ServeHTTP(dw, r)
		dw.arm()
	})
}

// deadlineWriter re-arms the connection's write deadline before each write.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *deadlineWriter) arm() { w.rc.SetWriteDeadline(time.Now().Add(w.d)) }

func (w *deadlineWriter) WriteHeader(code int) {
	w.arm()
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.arm()
	return w.ResponseWriter.Write(p)
}

// FlushError is what http.ResponseController.Flush calls.
func (w *deadlineWriter) FlushError() error {
	w.arm()
	return w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

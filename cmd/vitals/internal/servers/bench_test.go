package servers

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Header values of the bare handler, assigned as the library's handler
// assigns them (bench/servers/bare is the same handler).
var (
	bareTextPlain = []string{"text/plain; charset=utf-8"}
	bareNoStore   = []string{"no-store"}
	bareNosniff   = []string{"nosniff"}
	bareOK        = []byte("ok")
)

// bare answers "ok" with the probe endpoints' headers and does nothing
// else: the floor the probe path is compared with.
var bare = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr["Cache-Control"] = bareNoStore
	hdr["X-Content-Type-Options"] = bareNosniff
	hdr["Content-Type"] = bareTextPlain
	w.WriteHeader(http.StatusOK)
	w.Write(bareOK)
})

// BenchmarkProbePath is GET /readyz with 50 passing ready checks, through
// three stacks: bare (a handler that only answers), library (the Monitor's
// handler, as a service mounts it: bench/servers/vitals) and agent (the
// probe listener's: ProbeHandler with /metrics and the status page, on the
// Probe server over a Limit listener).
//
// handler/ serves a pre-built request into a reused writer: what each stack
// adds to an answer, and its allocations. server/ serves it over a real
// keep-alive loopback connection from a client that allocates nothing, so
// that allocs/op are the server's (net/http's own are most of them) and
// ns/op a round trip, to be compared between stacks of the same run.
func BenchmarkProbePath(b *testing.B) {
	m := readyMonitor(b, 50)
	agent := ProbeHandler(probeParts(m, false))
	for _, s := range []struct {
		name string
		h    http.Handler
	}{{"bare", bare}, {"library", m.Handler()}, {"agent", agent}} {
		b.Run("handler/"+s.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, "/readyz", nil)
			r.Header.Set("Accept", "*/*")
			w := newDiscardWriter()
			b.ReportAllocs()
			for b.Loop() {
				w.reset()
				s.h.ServeHTTP(w, r)
			}
			if w.code != http.StatusOK {
				b.Fatalf("GET /readyz answered %d, want 200", w.code)
			}
		})
	}
	servers := []struct {
		name  string
		serve func(net.Listener) (*http.Server, net.Listener)
	}{
		{"bare", func(ln net.Listener) (*http.Server, net.Listener) {
			return &http.Server{Handler: bare, ReadHeaderTimeout: ReadHeaderTimeout}, ln
		}},
		{"library", func(ln net.Listener) (*http.Server, net.Listener) {
			return &http.Server{Handler: m.Handler(), ReadHeaderTimeout: ReadHeaderTimeout}, ln
		}},
		{"agent", func(ln net.Listener) (*http.Server, net.Listener) {
			l := Limit(ln, "probe", probeCeiling)
			return Probe(agent, l, nil), l
		}},
	}
	for _, s := range servers {
		b.Run("server/"+s.name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			srv, l := s.serve(ln)
			go srv.Serve(l)
			defer srv.Close()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			get := newRawGet(c, "/readyz")
			if err := get(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := get(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// newRawGet returns a function that sends GET path on c, as the kubelet
// sends it, and reads a 200 "ok" answer, keeping c open, with no allocation
// of its own.
func newRawGet(c net.Conn, path string) func() error {
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: kube-probe/1.33\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n")
	r := bufio.NewReader(c)
	status := []byte("HTTP/1.1 200 ")
	body := make([]byte, len("ok"))
	return func() error {
		if _, err := c.Write(req); err != nil {
			return err
		}
		first := true
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return err
			}
			if first && !bytes.HasPrefix(line, status) {
				return errAnswer
			}
			first = false
			if len(line) == len("\r\n") {
				break
			}
		}
		if _, err := io.ReadFull(r, body); err != nil {
			return err
		}
		if string(body) != "ok" {
			return errAnswer
		}
		return nil
	}
}

var errAnswer = errors.New("the answer is not 200 ok")

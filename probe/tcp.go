package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// TCPSpec is a TCP check: a connection that must open and, optionally, a
// message and the answer it must get.
type TCPSpec struct {
	// Address is host:port, such as "127.0.0.1:6379" or "db:5432"; the port
	// is a number. An empty host, as in ":6379", is this machine, as in Go.
	// Required.
	Address string
	// Send is written once connected. Outputs give its length only, never
	// its bytes, as it may hold a password. Optional: by default nothing is
	// sent, and the connection is closed at once, as the kubelet does.
	Send string
	// Expect must appear in what the server sends back, within its first
	// 10 KiB: an answer to Send, or a banner the server sends first (SSH,
	// SMTP) when Send is empty. Optional.
	Expect string
}

// maxAnswer caps what is read of a TCP answer: the 10 KiB an HTTP body gets,
// enough for any banner or health reply.
const maxAnswer = maxBody

// TCP builds a TCP probe. With neither Send nor Expect it passes once the
// connection opens (the kubelet's tcpSocket probe); with Send it passes once
// that is written; with Expect, once the answer contains it. The answer is
// read until it contains Expect, the server closes the connection, 10 KiB
// have come or the context ends, so a wrong answer from a server that keeps
// the connection open fails at the timeout.
//
// A failure says what went wrong: Go's error for a connection that did not
// open, and how many bytes were sent and what came back (its first 64
// bytes, quoted) for an answer that did not match. What was sent is never
// shown: it may hold a password. The observed value is the time to connect
// in milliseconds.
func TCP(s TCPSpec) (*Prober, error) {
	if _, err := hostPort("tcp", s.Address); err != nil {
		return nil, err
	}
	if len(s.Expect) > maxAnswer {
		return nil, Invalid("tcp", "expect is %d bytes, but only the first %d of an answer are read", len(s.Expect), maxAnswer)
	}
	t := &tcpProbe{TCPSpec: s}
	return &Prober{kind: "tcp", target: "tcp " + s.Address, measure: t.measure}, nil
}

// hostPort checks that address is host:port with a port from 1 to 65535,
// and returns the host; kind names the probe in the error.
func hostPort(kind, address string) (string, error) {
	if address == "" {
		return "", Invalid(kind, "address is required (host:port)")
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		reason := err.Error()
		if ae, ok := err.(*net.AddrError); ok {
			reason = ae.Err // without the address, which the error quotes
		}
		return "", Invalid(kind, "address %q: %s", address, reason)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", Invalid(kind, "address %q: port %q is not a number from 1 to 65535", address, port)
	}
	return host, nil
}

type tcpProbe struct {
	TCPSpec
}

func (t *tcpProbe) measure(ctx context.Context) (health.Observation, error) {
	start := time.Now()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", t.Address)
	if err != nil {
		return health.Observation{}, err
	}
	obs := latency(time.Since(start))
	defer conn.Close()
	// ctx bounds the reads and the write: its deadline is the connection's,
	// and its cancellation closes the connection.
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	did := "connected"
	if t.Send != "" {
		if _, err := io.WriteString(conn, t.Send); err != nil {
			return obs, fmt.Errorf("connected, but sending %s failed: %w", byteCount(len(t.Send)), ioError(ctx, err))
		}
		did = "sent " + byteCount(len(t.Send))
	}
	obs.Message = did
	if t.Expect == "" {
		return obs, nil
	}
	answer, found, err := readUntil(conn, []byte(t.Expect))
	switch {
	case found:
		obs.Message = fmt.Sprintf("%s, and the answer contained %q", did, t.Expect)
		return obs, nil
	case len(answer) == 0 && err == io.EOF:
		return obs, fmt.Errorf("%s, but the server closed the connection without an answer", did)
	case len(answer) == 0:
		return obs, fmt.Errorf("%s, but no answer came: %w", did, ioError(ctx, err))
	case err == io.EOF:
		return obs, fmt.Errorf("%s, but the answer did not contain %q (got %s)", did, t.Expect, quoteStart(answer))
	case err == nil:
		return obs, fmt.Errorf("%s, but the first %d bytes of the answer did not contain %q (got %s)", did, maxAnswer, t.Expect, quoteStart(answer))
	}
	return obs, fmt.Errorf("%s, but the answer did not contain %q (got %s): %w", did, t.Expect, quoteStart(answer), ioError(ctx, err))
}

// byteCount says how many bytes n is: "1 byte", "14 bytes".
func byteCount(n int) string {
	if n == 1 {
		return "1 byte"
	}
	return strconv.Itoa(n) + " bytes"
}

// readUntil reads from r until what it read contains want, r ends (io.EOF)
// or fails, or maxAnswer bytes have come.
func readUntil(r io.Reader, want []byte) (answer []byte, found bool, err error) {
	buf := make([]byte, maxAnswer)
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		// A new match ends in the bytes that came: start len(want)-1 before them.
		from := max(0, n-len(want)+1)
		n += m
		if bytes.Contains(buf[from:n], want) {
			return buf[:n], true, nil
		}
		if err != nil {
			return buf[:n], false, err
		}
	}
	return buf[:n], false, nil
}

// quoteStart quotes the first 64 bytes of b, marking a cut: enough to tell
// one answer from another, and little of one that holds a secret.
func quoteStart(b []byte) string {
	const show = 64
	if len(b) <= show {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("%q…", b[:show])
}

// ioError is what a probe reports for err, the error of a read or a write
// on a connection bound to ctx: ctx's own error when ctx has ended, so that
// the output says the context ended, and not that the connection was closed.
// The connection's deadline is ctx's, and the two timers fire at the same
// moment in either order: when the connection's has fired, ctx's is awaited.
func ioError(ctx context.Context, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		<-ctx.Done()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

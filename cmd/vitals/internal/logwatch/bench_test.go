package logwatch

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"
)

// benchLog is n bytes of log lines of 40 to 300 bytes, as a busy service
// prints them, none of which the benchmark's patterns match.
func benchLog(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "2026-01-01T00:00:%02d.%06dZ level=info msg=\"request done\" path=/api/v1/items/%d status=200 took=%dms %s\n",
			i%60, i%1000000, i, i%97, payload[:i*53%220])
	}
	return b.Bytes()
}

// readOnly and writeOnly hide io.Copy's shortcuts (WriterTo, ReaderFrom),
// so that io.Copy copies through a buffer as it does between two pipes.
type readOnly struct{ io.Reader }
type writeOnly struct{ io.Writer }

// BenchmarkCopy compares Copy with two checks to io.Copy: in memory (what
// Copy itself costs) and between two pipes (what vitals pays: the system
// calls). The checks' patterns are the spec's, printed by no line, so every
// line is looked at; "regexp" has patterns without a plain-text start, which
// run the regular expression on every line.
func BenchmarkCopy(b *testing.B) {
	data := benchLog(8 << 20)
	checks := func(pattern, failPattern string) []*Check {
		started, err := NewCheck("started", Spec{Pattern: pattern}, nil)
		if err != nil {
			b.Fatal(err)
		}
		failing, err := NewCheck("setup-errors", Spec{FailPattern: failPattern}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return []*Check{started, failing}
	}
	copies := []struct {
		name string
		copy func(dst io.Writer, src io.Reader) error
	}{
		{"io.Copy", func(dst io.Writer, src io.Reader) error { _, err := io.Copy(dst, src); return err }},
		{"Copy-no-checks", streamCopy(New(nil, nil))},
		{"Copy-2-checks", streamCopy(New(checks("Listening on", "OIDC provider setup failed"), nil))},
		{"Copy-2-checks-regexp", streamCopy(New(checks(`(?i)listening on`, `(?i)oidc provider setup failed`), nil))},
	}
	for _, c := range copies {
		b.Run("memory/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := c.copy(writeOnly{io.Discard}, readOnly{bytes.NewReader(data)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, c := range copies {
		b.Run("pipe/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				srcR, srcW, _ := os.Pipe()
				dstR, dstW, _ := os.Pipe()
				go func() { srcW.Write(data); srcW.Close() }()
				drained := make(chan struct{})
				go func() { io.Copy(io.Discard, dstR); close(drained) }()
				if err := c.copy(dstW, srcR); err != nil {
					b.Fatal(err)
				}
				dstW.Close()
				<-drained
				srcR.Close()
				dstR.Close()
			}
		})
	}
}

func streamCopy(s *Streams) func(dst io.Writer, src io.Reader) error {
	return func(dst io.Writer, src io.Reader) error { return s.Copy(dst, src, Stdout) }
}

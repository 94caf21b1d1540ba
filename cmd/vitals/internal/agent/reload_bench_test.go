package agent

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

// benchChecks is the size of the file of the reload's benchmarks.
const benchChecks = 1000

// benchFile writes a file of benchChecks file checks, the first one's
// period given, and returns its path.
func benchFile(b *testing.B, dir, period string) string {
	var s strings.Builder
	s.WriteString("listen: 127.0.0.1:0\napi: /tmp/vitals-bench.sock\nchecks:\n")
	for i := range benchChecks {
		p := "10s"
		if i == 0 {
			p = period
		}
		fmt.Fprintf(&s, "  c%04d: {file: {path: %s}, period: %s}\n", i, os.Args[0], p)
	}
	path := filepath.Join(dir, "vitals.yaml")
	if err := os.WriteFile(path, []byte(s.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkLoadAtStart is what a file of 1,000 checks costs as vitals
// starts: read, checked, and its agent built (its checks made and added).
// BenchmarkReloadOfOneCheck is a reload of the same file with one check's
// period changed: read and checked again, compared, and the one change
// applied. BENCHMARKS.md gives the ratio.
func BenchmarkLoadAtStart(b *testing.B) {
	path := benchFile(b, b.TempDir(), "10s")
	for b.Loop() {
		c, err := config.Load(path, kinds.All, config.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := New(c, Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReloadOfOneCheck(b *testing.B) {
	dir := b.TempDir()
	path := benchFile(b, dir, "10s")
	c, err := config.Load(path, kinds.All, config.Options{})
	if err != nil {
		b.Fatal(err)
	}
	a, err := New(c, Options{Logger: slog.New(slog.DiscardHandler),
		Reload: func() (*config.Config, error) { return config.Load(path, kinds.All, config.Options{}) }})
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		b.StopTimer()
		benchFile(b, dir, []string{"5s", "10s"}[i%2])
		i++
		b.StartTimer()
		out, err := a.Reload("bench")
		if err != nil || len(out.Retimed) != 1 {
			b.Fatalf("%+v %v", out, err)
		}
	}
}

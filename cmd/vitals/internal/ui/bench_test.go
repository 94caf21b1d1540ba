package ui_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/ui"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

// fileLike measures as a file check does: its outputs and values are the
// size of a file check's.
type fileLike struct{}

func (fileLike) Check(context.Context) error { return nil }

func (fileLike) Measure(context.Context) (health.Observation, error) {
	return health.Observation{Value: 4.49, Unit: "s", Message: "3 bytes, modified 4s ago"}, nil
}

// BenchmarkStatus builds the status of 50 file checks, each with 60
// results kept (bench's P6), as a page asks for it after an event.
func BenchmarkStatus(b *testing.B) {
	clock := healthtest.NewClock(time.Time{})
	m := health.New(health.WithClock(clock), health.WithJitter(0), health.WithLogger(slog.New(slog.DiscardHandler)))
	for i := range 50 {
		if err := m.Add(health.Check{Name: fmt.Sprintf("check-%02d", i), Level: health.Ready, Period: time.Second, Kind: "tcp",
			Checker: fileLike{}}); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.Start(ctx)
	for range 70 {
		clock.Advance(time.Second)
		time.Sleep(time.Millisecond)
	}
	page := ui.New(m, ui.Options{Details: true})
	req := httptest.NewRequest(http.MethodGet, "/ui/api/status", nil)
	w := httptest.NewRecorder()
	page.ServeHTTP(w, req)
	b.Logf("%d bytes", w.Body.Len())
	b.ReportAllocs()
	for b.Loop() {
		m.Emit(health.Event{Type: health.EventNotice, Key: "x"}) // a new status each time
		w := httptest.NewRecorder()
		page.ServeHTTP(w, req)
	}
}

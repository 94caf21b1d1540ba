package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"time"
	"unsafe"
)

// An entry's size class: the allocator gives an entry of up to 568 bytes
// 576 (an object of more than 512 bytes with pointers carries an 8-byte
// header), and one of 569 to 632 bytes 640. A field more moves every entry
// to the larger class: 0.6 MiB more for the 10,000 checks of bench's P3,
// whose heap has a bound. What only heartbeats and watchdogs need is kept
// apart (timedLife), a place keeps its wake as a key rather than a
// time.Time, and checkState's bools share a word.
const (
	maxEntryStruct = 568
	entryClass     = 576
	nextClass      = 640
)

func TestACheckEntryTakesNoMoreThanItsSizeClass(t *testing.T) {
	if size := unsafe.Sizeof(entry{}); size > maxEntryStruct {
		t.Errorf("an entry is %d bytes, want at most %d: the allocator would give it %d, not %d", size, maxEntryStruct, nextClass, entryClass)
	}
	// And on the heap: 10,000 entries, as the Monitor allocates them. The
	// bound is halfway to the next class, as other goroutines of the
	// package's tests may allocate meanwhile.
	const n = 10_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	entries := make([]*entry, n)
	for i := range entries {
		entries[i] = &entry{}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(entries)
	perEntry := (int64(after.HeapAlloc) - int64(before.HeapAlloc) - int64(cap(entries)*8)) / n
	t.Logf("an entry takes %d bytes on the heap (its struct %d)", perEntry, unsafe.Sizeof(entry{}))
	if perEntry >= (entryClass+nextClass)/2 {
		t.Errorf("an entry takes %d bytes on the heap, want its class's %d", perEntry, entryClass)
	}
}

// Every Reset (or StopCheck/StartCheck) while startup has not passed parks
// each live and ready check again, appending it to s.park, which only
// startupPassed empties.
// Checks parked until startup passes are parked once, however often they
// start over.
func TestChecksWaitingForStartupAreParkedOnceAcrossResets(t *testing.T) {
	m := New(WithLogger(slog.New(slog.DiscardHandler)), WithJitter(0))
	m.Add(Check{Name: "boot", Level: Startup, Period: time.Hour, Checker: CheckerFunc(func(context.Context) error { return errors.New("not yet") })})
	for i := range 10 {
		m.Add(Check{Name: fmt.Sprintf("r%d", i), Level: Ready, Period: time.Hour, Checker: CheckerFunc(func(context.Context) error { return nil })})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); <-m.Done() }()
	m.Start(ctx)
	parked := func() int {
		m.sched.mu.Lock()
		defer m.sched.mu.Unlock()
		n := 0
		for _, e := range m.entries {
			if e.place.parked {
				n++
			}
		}
		return n
	}
	for r := range 50 {
		deadline := time.Now().Add(5 * time.Second)
		for parked() < 10 {
			if time.Now().After(deadline) {
				t.Fatalf("reset %d: %d parked", r, parked())
			}
			time.Sleep(100 * time.Microsecond)
		}
		m.Reset("again")
	}
	m.sched.mu.Lock()
	n := len(m.sched.park)
	m.sched.mu.Unlock()
	if n > 20 {
		t.Fatalf("s.park holds %d entries for 10 parked checks after 50 resets", n)
	}
}

func TestAHistoryOfAHugeSizeKeepsResults(t *testing.T) {
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("history of size 1<<31 panics on its first result: %v", p)
		}
	}()
	h := newHistory(1 << 31)
	h.add(Result{OK: true})
}

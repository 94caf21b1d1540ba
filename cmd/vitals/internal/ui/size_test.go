package ui_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/ui"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

// noisyClock is a fake clock whose readings move on a little at each one,
// as a real clock does while checks run: results have durations of
// milliseconds, and starts that are not on the period's ticks.
type noisyClock struct {
	*healthtest.Clock
	mu     sync.Mutex
	rnd    *rand.Rand
	base   time.Time
	offset time.Duration
}

func (c *noisyClock) Now() time.Time {
	now := c.Clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !now.Equal(c.base) {
		c.base, c.offset = now, 0
	}
	c.offset += time.Duration(c.rnd.Int64N(int64(time.Millisecond)))
	return now.Add(c.offset)
}

// outputs are what the checks of the large page say at each run n: most
// as an HTTP check does, the same for a few runs; a quarter as a file
// check does, something new at each run, with a value; now and then a
// failure.
func largePageResult(i int, n int64) (health.Observation, error) {
	if i%10 == 3 && n%17 == 0 {
		return health.Observation{}, fmt.Errorf("dial tcp 10.0.%d.17:5432: connect: connection refused", i%8)
	}
	if i%4 == 0 {
		age := n % 10
		return health.Observation{Value: float64(age), Unit: "s",
			Message: fmt.Sprintf("/var/lib/app/stamp-%03d: 31 bytes, modified %ds ago", i, age)}, nil
	}
	return health.Observation{Message: fmt.Sprintf("HTTP 200 OK from https://svc-%03d.internal:8443/healthz: %d bytes", i, 340+(n/4)%3)}, nil
}

type largePageCheck struct {
	i    int
	runs *int64
	mu   *sync.Mutex
}

func (c largePageCheck) Check(ctx context.Context) error {
	_, err := c.Measure(ctx)
	return err
}

func (c largePageCheck) Measure(context.Context) (health.Observation, error) {
	c.mu.Lock()
	*c.runs++
	n := *c.runs
	c.mu.Unlock()
	return largePageResult(c.i, n)
}

// largePage is a Monitor with 200 checks, each with its 60 results kept.
func largePage(t testing.TB) (*health.Monitor, *healthtest.Clock) {
	clock := &noisyClock{Clock: healthtest.NewClock(time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)), rnd: rand.New(rand.NewPCG(1, 2))}
	m := health.New(health.WithClock(clock), health.WithLogger(slog.New(slog.DiscardHandler)))
	for i := range 200 {
		var runs int64
		if err := m.Add(health.Check{Name: fmt.Sprintf("check-%03d", i), Level: health.Ready, Kind: "http", Period: 10 * time.Second,
			Checker: largePageCheck{i: i, runs: &runs, mu: &sync.Mutex{}}}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m.Start(ctx)
	for deadline := time.Now().Add(30 * time.Second); ; { // a guard only
		clock.Advance(time.Second)
		full := true
		for _, c := range m.Snapshot().Checks {
			full = full && len(c.History) == health.DefaultHistory
		}
		if full {
			// The runs of the last second may still be ending: the test
			// compares the page's status with a Snapshot taken after it,
			// so it begins once they have (the fake clock starts no more).
			runs := func() (n int) {
				for _, c := range m.Snapshot().Checks {
					n += c.Runs
				}
				return n
			}
			for last, same := -1, 0; same < 5; time.Sleep(20 * time.Millisecond) { // 100ms without a run
				if n := runs(); n == last {
					same++
				} else {
					last, same = n, 0
				}
			}
			return m, clock.Clock
		}
		if time.Now().After(deadline) {
			t.Fatal("the histories did not fill within 30s")
		}
		time.Sleep(time.Millisecond)
	}
}

// 200 checks with full histories are a status of at most 160 KB, and
// about a third of that gzipped; a page that has it is told in a 304 that nothing changed,
// and gets a new ETag once something has.
func TestAStatusOf200ChecksIsSmallGzippedAndRevalidated(t *testing.T) {
	m, clock := largePage(t)
	srv := httptest.NewServer(ui.New(m, ui.Options{Details: true}))
	defer srv.Close()
	get := func(header ...string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/ui/api/status", nil)
		must(t, err)
		req.Header.Set("Accept-Encoding", "identity") // no transparent gzip: the test reads what is sent
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		must(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		must(t, err)
		return res, b
	}

	plain, body := get()
	if plain.StatusCode != http.StatusOK || plain.Header.Get("Content-Encoding") != "" || plain.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("without gzip asked: %s, encoding %q, vary %q", plain.Status, plain.Header.Get("Content-Encoding"), plain.Header.Get("Vary"))
	}
	zipped, zbody := get("Accept-Encoding", "gzip, deflate, br")
	if zipped.StatusCode != http.StatusOK || zipped.Header.Get("Content-Encoding") != "gzip" || zipped.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("with gzip asked: %s, encoding %q, vary %q", zipped.Status, zipped.Header.Get("Content-Encoding"), zipped.Header.Get("Vary"))
	}
	if res, _ := get("Accept-Encoding", "gzip;q=0"); res.Header.Get("Content-Encoding") != "" {
		t.Errorf("gzip;q=0 is answered in gzip")
	}
	zr, err := gzip.NewReader(bytes.NewReader(zbody))
	must(t, err)
	unzipped, err := io.ReadAll(zr)
	must(t, err)
	if !bytes.Equal(unzipped, body) {
		t.Errorf("the gzipped status is not the status")
	}
	// What is sent is every result, as the Monitor keeps it: its start to
	// the millisecond, its duration to the tenth of one, the rest as it is.
	var st client.Status
	must(t, json.Unmarshal(body, &st))
	asList, err := json.Marshal(st.Checks) // the checks as GET /v1/checks/NAME writes them, history as a list
	must(t, err)
	t.Logf("200 checks with full histories: status %d bytes plain, %d gzipped; the checks with their histories as lists alone: %d bytes",
		len(body), len(zbody), len(asList))
	// Measured (RELIABILITY.md, R10): about 142 KB and 51 KB gzipped (under
	// -race, whose slower runs last longer, 153 KB and 57 KB), the
	// histories as lists 1.9 MB. Most of what is left is the runs' own
	// noise: each start's place in its period and each duration. The 200
	// checks start together and so run in four batches (the jitter's
	// phases), and this clock moves on at each reading: the starts of a
	// batch spread over up to 100ms, whose milliseconds are written (133 KB
	// and 143 KB when the jitter spread them over the period). The bounds
	// leave room for a loaded machine's longer runs.
	if len(body) > 160_000 || len(zbody) > 64<<10 {
		t.Errorf("status %d bytes plain, %d gzipped; want at most 160 KB, 64 KiB", len(body), len(zbody))
	}
	snap := m.Snapshot()
	for i, c := range st.Checks {
		want := snap.Checks[i].History
		if len(c.History) != len(want) || c.Last == nil || c.Last.Output != want[len(want)-1].Output {
			t.Fatalf("%s: %d results, last %+v; want %d", c.Name, len(c.History), c.Last, len(want))
		}
		for j, r := range c.History {
			w := want[j]
			if !r.Time.Equal(w.Time.Truncate(time.Millisecond)) || time.Duration(r.Duration) != w.Duration.Round(100*time.Microsecond) ||
				r.OK != w.OK || r.Warn != w.Warn || r.Undecided != w.Undecided || r.Output != w.Output ||
				r.ObservedUnit != w.ObservedUnit || !reflect.DeepEqual(r.ObservedValue, w.ObservedValue) {
				t.Fatalf("%s result %d: %+v, want %+v", c.Name, j, r, w)
			}
		}
	}

	// Each encoding revalidates its own ETag, and only its own: a cache
	// that holds one encoding is never told that another is the same.
	for _, tc := range []struct {
		etag, enc string
		want      int
	}{
		{plain.Header.Get("ETag"), "identity", http.StatusNotModified},
		{zipped.Header.Get("ETag"), "gzip", http.StatusNotModified},
		{plain.Header.Get("ETag"), "gzip", http.StatusOK},
		{zipped.Header.Get("ETag"), "identity", http.StatusOK},
	} {
		res, b := get("If-None-Match", tc.etag, "Accept-Encoding", tc.enc)
		if res.StatusCode != tc.want || tc.want == http.StatusNotModified && len(b) != 0 {
			t.Errorf("If-None-Match %s, Accept-Encoding %s: %s with %d bytes, want %d", tc.etag, tc.enc, res.Status, len(b), tc.want)
		}
	}
	// A second later, with nothing new, the status is the same one.
	time.Sleep(1100 * time.Millisecond)
	if res, _ := get("If-None-Match", plain.Header.Get("ETag")); res.StatusCode != http.StatusNotModified {
		t.Errorf("a second later, nothing new: %s, want 304", res.Status)
	}
	// A run of every check is new.
	clock.Advance(10 * time.Second)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) { // a guard only
		res, _ := get("If-None-Match", plain.Header.Get("ETag"))
		if res.StatusCode == http.StatusOK {
			if res.Header.Get("ETag") == plain.Header.Get("ETag") {
				t.Errorf("a new status with the old ETag %s", res.Header.Get("ETag"))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after new runs: still %s", res.Status)
		}
	}
}

package client_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// A status writes each check's results as columns and reads them back as
// the history and last result Go callers know: to the millisecond for a
// start and the microsecond for a duration, every output as it was.
func TestAStatusReadsBackTheResultsItWrites(t *testing.T) {
	at := time.Date(2026, 12, 7, 3, 0, 0, 123456789, time.UTC)
	history := []client.Result{
		{Time: at, Duration: client.Duration(1234567 * time.Nanosecond), OK: true, Output: "HTTP 200 in 12.3ms", ObservedValue: 12.3, ObservedUnit: "ms"},
		{Time: at.Add(9700 * time.Millisecond), Duration: client.Duration(2 * time.Millisecond), OK: true, Output: "HTTP 200 in 14.1ms", ObservedValue: 14.1, ObservedUnit: "ms"},
		{Time: at.Add(20 * time.Second), Duration: client.Duration(time.Second), Output: "dial tcp: connection refused ✗"},
		{Time: at.Add(30 * time.Second), Duration: client.Duration(time.Second), Output: "dial tcp: connection refused ✗"},
		{Time: at.Add(40 * time.Second), Undecided: true, Output: "ünïcode \xff waits"},
		{Time: at.Add(50 * time.Second), OK: true, Warn: true},
		{Time: at.Add(55 * time.Second), OK: true, Output: "ünïcode \xff waits, again"},
	}
	in := client.Status{Time: at, Checks: []client.Check{
		{Name: "db", Level: health.Ready, Period: client.Duration(10 * time.Second), History: history, Last: &history[len(history)-1]},
		{Name: "new", Level: health.Live, Period: client.Duration(time.Second)},
	}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"history"`) || strings.Contains(string(b), `"last"`) || !strings.Contains(string(b), `"status":"ppffuwp"`) {
		t.Errorf("the status writes lists:\n%s", b)
	}
	var out client.Status
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	want := make([]client.Result, len(history))
	for i, r := range history {
		r.Time = r.Time.Truncate(time.Millisecond)
		r.Duration = client.Duration(time.Duration(r.Duration).Round(time.Microsecond))
		r.Output = strings.ToValidUTF8(r.Output, "\uFFFD") // as any JSON writes it
		want[i] = r
	}
	got := out.Checks[0]
	if !reflect.DeepEqual(got.History, want) || got.Last == nil || !reflect.DeepEqual(*got.Last, want[len(want)-1]) {
		t.Errorf("read back\n%+v\nlast %+v\nwant\n%+v\nfrom %s", got.History, got.Last, want, b)
	}
	if out.Checks[1].History != nil || out.Checks[1].Last != nil || out.Checks[1].Name != "new" {
		t.Errorf("a check with no result: %+v", out.Checks[1])
	}

	// A status from an agent that wrote lists reads as it did.
	var old client.Status
	if err := json.Unmarshal([]byte(`{"checks":[{"name":"db","level":"ready","history":[{"time":"2026-12-07T03:00:00Z","duration":"1ms","ok":true}],
		"last":{"time":"2026-12-07T03:00:00Z","duration":"1ms","ok":true}}]}`), &old); err != nil {
		t.Fatal(err)
	}
	if len(old.Checks[0].History) != 1 || old.Checks[0].Last == nil || !old.Checks[0].Last.OK {
		t.Errorf("a status with lists: %+v", old.Checks[0])
	}
}

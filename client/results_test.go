package client_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// A status writes each check's results compactly and reads them back as
// the history and last result Go callers know: to the millisecond for a
// start and the tenth of a millisecond for a duration, every output as it
// was.
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
	steady := []client.Result{
		{Time: at.Add(-time.Hour), Duration: client.Duration(50 * time.Microsecond), OK: true, Output: "up"},
		{Time: at.Add(-time.Hour + 1200*time.Millisecond), Duration: client.Duration(149 * time.Microsecond), OK: true, Output: "up"},
	}
	// More outcomes than a digit counts, runs far from their period, and
	// durations of hours.
	var many []client.Result
	for i := range 40 {
		many = append(many, client.Result{Time: at.Add(time.Duration(i*i) * time.Minute), Duration: client.Duration(time.Duration(i) * time.Hour),
			OK: i%3 == 0, Output: fmt.Sprintf("run %d", i%37)})
	}
	in := client.Status{Time: at, Checks: []client.Check{
		{Name: "db", Level: health.Ready, Period: client.Duration(10 * time.Second), SuccessThreshold: 1, FailureThreshold: 3, History: history, Last: &history[len(history)-1]},
		{Name: "new", Level: health.Live, Period: client.Duration(time.Second), SuccessThreshold: 2, FailureThreshold: 1, Stopped: true},
		{Name: "steady", Level: health.Live, Period: client.Duration(time.Second), SuccessThreshold: 1, FailureThreshold: 3, Successes: 2, Runs: 2,
			InitialDelay: client.Duration(time.Second), History: steady, Last: &steady[1]},
		{Name: "many", Level: health.Ready, Period: client.Duration(time.Second), SuccessThreshold: 1, FailureThreshold: 3, History: many, Last: &many[39]},
	}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"history"`) || strings.Contains(string(b), `"last"`) || strings.Count(string(b), `"runs":"`) != 3 ||
		strings.Count(string(b), "dial tcp: connection refused") != 1 || strings.Count(string(b), `Threshold"`) != 2 {
		t.Errorf("the status writes lists, an outcome twice or thresholds it need not:\n%s", b)
	}
	var out client.Status
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	for i, c := range in.Checks {
		want := c
		want.History = make([]client.Result, len(c.History))
		for j, r := range c.History {
			r.Time = r.Time.Truncate(time.Millisecond)
			r.Duration = client.Duration(time.Duration(r.Duration).Round(100 * time.Microsecond))
			r.Output = strings.ToValidUTF8(r.Output, "\uFFFD") // as any JSON writes it
			want.History[j] = r
		}
		if len(want.History) > 0 {
			want.Last = &want.History[len(want.History)-1]
		} else {
			want.History = nil
		}
		if !reflect.DeepEqual(out.Checks[i], want) {
			t.Errorf("read back\n%+v\nwant\n%+v\nfrom %s", out.Checks[i], want, b)
		}
	}

	// Results that are not what a status writes are an error, not a history.
	for _, results := range []string{
		`{"runs":"AA*A","outcomes":["p","up"]}`,              // no base64 digit
		`{"runs":"AAg","outcomes":["p","up"]}`,               // the last number cut short
		`{"runs":"AAA","outcomes":["p","up"]}`,               // three numbers for runs of two
		`{"runs":"AACAAE","outcomes":["p","up","f","down"]}`, // outcome 2 of 2
		`{"runs":"AA","outcomes":["x","up"]}`,                // no status letter
		`{"runs":"AA","outcomes":["p",[3,0,"up"]]}`,          // 3 characters of none
		`{"runs":"AA","outcomes":[]}`,
		`{"runs":"AAC","outcomes":["p","up","f",[9223372036854775807,1,"x"]]}`, // front and back that overflow their sum
		`{"runs":"AAC","outcomes":["p","up","f",[1,9223372036854775807,"x"]]}`,
		`{"runs":"AggggggggggggQ","outcomes":["p","up"]}`, // a 65th bit
	} {
		var st client.Status
		if err := json.Unmarshal([]byte(`{"checks":[{"name":"db","period":"1s","results":`+results+`}]}`), &st); err == nil {
			t.Errorf("results %s read as %+v", results, st.Checks[0].History)
		}
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

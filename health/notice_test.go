package health_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/health"
)

// A notice's key is Pebble's form, or the same without its domain; its data
// is a few bounded name=value pairs. What is refused says why, and names the
// entry at fault.
func TestANoticeIsTakenOrRefusedSayingWhy(t *testing.T) {
	many := map[string]string{}
	for i := range health.MaxNoticeEntries + 1 {
		many[fmt.Sprintf("n%d", i)] = "v"
	}
	big := map[string]string{}
	for i := range 5 {
		big[fmt.Sprintf("n%d", i)] = strings.Repeat("v", health.MaxNoticeValue)
	}
	for _, tc := range []struct {
		key   string
		data  map[string]string
		err   string // "": taken
		entry string
	}{
		{"example.com/config-reloaded", nil, "", ""},
		{"canonical.com/charm/leader-elected", map[string]string{"generation": "4", "path": "/etc/app.conf"}, "", ""},
		{"config-reloaded", nil, "", ""},
		{"db/leader-elected", map[string]string{"Node_ID.v-2": "a b\nc"}, "", ""},
		{"v2", map[string]string{"empty": ""}, "", ""},
		{strings.Repeat("a", health.MaxNoticeKey), nil, "", ""},
		{"", nil, "no notice key: give one such as example.com/config-reloaded or config-reloaded", ""},
		{strings.Repeat("a", health.MaxNoticeKey+1), nil, "notice key of 257 bytes: at most 256", ""},
		{"Config-Reloaded", nil, `notice key "Config-Reloaded": want lower-case words`, ""},
		{"example.com", nil, `notice key "example.com": want`, ""},
		{"example.com/", nil, `notice key "example.com/": want`, ""},
		{"config--reloaded", nil, `notice key "config--reloaded": want`, ""},
		{"config reloaded", nil, `notice key "config reloaded": want`, ""},
		{"/config", nil, `notice key "/config": want`, ""},
		{"config_reloaded", nil, `notice key "config_reloaded": want`, ""},
		{"a", many, "33 data entries: at most 32", ""},
		{"a", map[string]string{"": "v"}, `data name "": want letters, digits and - _ . (at most 64 bytes)`, ""},
		{"a", map[string]string{"a=b": "v"}, `data name "a=b": want letters`, "a=b"},
		{"a", map[string]string{strings.Repeat("n", health.MaxNoticeName+1): "v"}, `data name "nnnn`, strings.Repeat("n", health.MaxNoticeName+1)},
		{"a", map[string]string{"log": strings.Repeat("x", health.MaxNoticeValue+1)}, "data log: a value of 1025 bytes: at most 1024", "log"},
		{"a", map[string]string{"bin": "\xff"}, "data bin: the value is not UTF-8 text", "bin"},
		{"a", big, "data of 5130 bytes (names and values): at most 4096", ""},
	} {
		err := health.ValidateNotice(tc.key, tc.data)
		var ne *health.NoticeError
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%.40q %v: %v, want it taken", tc.key, tc.data, err)
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
			t.Errorf("%.40q: %v, want %q", tc.key, err, tc.err)
		case tc.err != "" && (!errors.As(err, &ne) || ne.Entry != tc.entry):
			t.Errorf("%.40q: %#v, want a *NoticeError naming entry %q", tc.key, err, tc.entry)
		}
	}
}

// Notify records an event of type notice, in the log with the others, as
// JSON with its key and data; its values are kept as outputs are, and the
// caller's map stays the caller's. A notice refused records nothing.
func TestNotifyRecordsANoticeInTheEventLog(t *testing.T) {
	m, clk := fakeMonitor(t, health.WithRedaction(func(s string) string { return strings.ReplaceAll(s, "s3cret", "xxxxx") }))
	follower := m.Follow(m.LastEventID())
	data := map[string]string{"generation": "4", "token": "s3cret", "title": "\x1b]0;owned\a"}
	e, err := m.Notify("example.com/config-reloaded", data)
	if err != nil {
		t.Fatal(err)
	}
	data["generation"] = "5"
	want := health.Event{ID: 1, Time: clk.Now(), Type: health.EventNotice, Key: "example.com/config-reloaded",
		Data: map[string]string{"generation": "4", "token": "xxxxx", "title": `\x1b]0;owned\a`}}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("Notify returned %+v, want %+v", e, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // read what is there, without waiting
	evs, _, err := follower.Next(ctx)
	if err != nil || len(evs) != 1 || !reflect.DeepEqual(evs[0], want) {
		t.Fatalf("the log holds %+v (%v), want the notice", evs, err)
	}
	b, _ := json.Marshal(evs[0])
	if got := string(b); got != `{"id":1,"time":"2026-01-01T00:00:00Z","type":"notice","key":"example.com/config-reloaded","data":{"generation":"4","title":"\\x1b]0;owned\\a","token":"xxxxx"}}` {
		t.Errorf("JSON %s", got)
	}
	var back health.Event
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, want) {
		t.Errorf("read back %+v (%v), want %+v", back, err, want)
	}

	if _, err := m.Notify("Bad Key", nil); err == nil || m.LastEventID() != 1 {
		t.Errorf("a bad key: %v, last id %d; want an error and nothing recorded", err, m.LastEventID())
	}
	if e, err := m.Notify("started", nil); err != nil || e.ID != 2 || e.Data != nil {
		t.Errorf("a notice without data: %+v %v", e, err)
	}
}

// A key is taken exactly when it has the form the docs give as a regular
// expression, Pebble's with its domain made optional; so every key Pebble
// takes for a custom notice is taken. Every string of up to 5 characters of
// an alphabet that has each kind of character tells.
func TestAKeyIsPebblesFormWithItsDomainOptional(t *testing.T) {
	pebble := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*(\.[a-z0-9]+(-[a-z0-9]+)*)+(/[a-z0-9]+(-[a-z0-9]+)*)+$`)
	vitals := regexp.MustCompile(`^([a-z0-9]+(-[a-z0-9]+)*(\.[a-z0-9]+(-[a-z0-9]+)*)+/)?[a-z0-9]+(-[a-z0-9]+)*(/[a-z0-9]+(-[a-z0-9]+)*)*$`)
	const alphabet = "a1-./A_"
	keys := []string{""}
	for n := 0; n < 5; n++ {
		for _, k := range keys {
			if len(k) == n {
				for _, c := range alphabet {
					keys = append(keys, k+string(c))
				}
			}
		}
	}
	taken := 0
	for _, k := range keys {
		err := health.ValidateNotice(k, nil)
		if want := vitals.MatchString(k); (err == nil) != want {
			t.Errorf("key %q: %v; the form says %v", k, err, want)
		}
		if pebble.MatchString(k) && err != nil {
			t.Errorf("key %q, which Pebble takes: %v", k, err)
		}
		if err == nil {
			taken++
		}
	}
	if taken < 100 {
		t.Fatalf("%d keys of %d taken: the alphabet tells nothing", taken, len(keys))
	}
}

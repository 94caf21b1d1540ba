package hooks

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/version"
)

// NoticeKey is the key of the Pebble notice that records the events of type
// t: vitals.dev/ and the type (vitals.dev/check-failed), of the form Pebble
// wants of a custom notice's key, domain.tld/path.
func NoticeKey(t health.EventType) string { return "vitals.dev/" + string(t) }

// maxNoticeData is the most Pebble takes as a notice's data: 4 KiB of its
// JSON, as sent (maxNoticeDataSize in Pebble's internals/daemon/api_notices.go).
const maxNoticeData = 4 << 10

// cutMark ends a value of a notice's data that was cut to fit maxNoticeData.
const cutMark = "…"

// newPebbleNotice is the request of a Pebble notice hook: POST /v1/notices on
// Pebble's socket, which is how `pebble notify` records one. Pebble takes
// notices on its socket only: it records each with the user id that the
// socket tells it the caller runs as.
func newPebbleNotice(p config.PebbleNoticeHook) *sender {
	socket := p.Socket
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = nil
	transport.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}
	header := http.Header{}
	header.Set("Content-Type", "application/json")
	header.Set("User-Agent", "vitals/"+version.Version)
	return &sender{
		retry:     p.HookRetry,
		method:    http.MethodPost,
		url:       "http://localhost/v1/notices", // the host is Pebble's client's; the socket decides
		what:      "POST /v1/notices on " + socket,
		client:    &http.Client{Transport: transport},
		header:    header,
		reason:    pebbleReason,
		delivered: pebbleRecorded,
		receiver:  "Pebble's answer with the notice's id",
	}
}

// workloadNoticePrefix is where a notice of the workload's whose key has no
// domain goes among Pebble's keys, which need one.
const workloadNoticePrefix = "vitals.dev/notice/"

// maxNoticeKey is the longest key Pebble takes, in bytes (maxNoticeKeyLength
// in Pebble's internals/daemon/api_notices.go).
const maxNoticeKey = 256

// pebbleNoticeOf is the key and data of the Pebble notice that records ev. A
// notice of the workload's (vitals notify) is the notice pebble notify would
// have recorded: its key as it is when it has a domain
// (example.com/config-reloaded), else under workloadNoticePrefix
// (vitals.dev/notice/config-reloaded), and its data as it is. Any other
// event is the notice NoticeKey(its type), its fields its data.
func pebbleNoticeOf(ev health.Event, event []byte) (string, map[string]string, error) {
	if ev.Type == health.EventNotice && ev.Key != "" {
		key := ev.Key
		if first, _, ok := strings.Cut(key, "/"); !ok || !strings.Contains(first, ".") {
			key = workloadNoticePrefix + key
		}
		if len(key) <= maxNoticeKey {
			if ev.Data == nil {
				return key, map[string]string{}, nil // Pebble's data is an object
			}
			return key, ev.Data, nil
		}
	}
	fields, err := eventStrings(ev, event)
	return NoticeKey(ev.Type), fields, err
}

// noticeBody is the body of POST /v1/notices that records an event as p's
// custom notice, whose key and data pebbleNoticeOf says.
func noticeBody(p config.PebbleNoticeHook) func(ev health.Event, event []byte) ([]byte, error) {
	return func(ev health.Event, event []byte) ([]byte, error) {
		key, fields, err := pebbleNoticeOf(ev, event)
		if err != nil {
			return nil, err
		}
		notice := struct {
			Action      string          `json:"action"`
			Type        string          `json:"type"`
			Key         string          `json:"key"`
			RepeatAfter string          `json:"repeat-after,omitempty"`
			Data        json.RawMessage `json:"data"`
		}{Action: "add", Type: "custom", Key: key, Data: noticeData(fields, maxNoticeData)}
		if p.RepeatAfter > 0 {
			notice.RepeatAfter = p.RepeatAfter.String()
		}
		return marshal(notice)
	}
}

// noticeData is the JSON of a notice's data, fields, at most limit bytes
// long: while it is longer, its longest value (the first by name of the
// longest) is cut to the longest start that fits, and ends with cutMark.
// No event of today's types comes near Pebble's 4 KiB: an output or a
// reason is at most 1 KiB, 2 KiB in JSON; the cut keeps a longer field of a
// later type from losing the whole event.
func noticeData(fields map[string]string, limit int) json.RawMessage {
	fields = maps.Clone(fields)
	fits := func() bool { data, _ := marshal(fields); return len(data) <= limit }
	for !fits() {
		longest := ""
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			if longest == "" || len(fields[k]) > len(fields[longest]) {
				longest = k
			}
		}
		v := strings.TrimSuffix(fields[longest], cutMark)
		if v == "" {
			break // nothing left to cut: Pebble says what it refuses
		}
		// The longest start of v that fits, found by halves: an escape
		// makes a byte longer in JSON, so bytes do not say.
		fields[longest] = cutMark
		if !fits() {
			continue // not even empty: cut the next longest too
		}
		lo, hi := 0, len(v) // v[:lo] fits, v[:hi] does not
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			for mid > lo && !utf8.RuneStart(v[mid]) {
				mid--
			}
			if mid == lo {
				break
			}
			if fields[longest] = v[:mid] + cutMark; fits() {
				lo = mid
			} else {
				hi = mid
			}
		}
		fields[longest] = v[:lo] + cutMark
	}
	data, _ := marshal(fields) // a map of strings always marshals
	return data
}

// marshal is v's JSON with <, > and & as they are: Pebble counts the bytes
// of a notice's data, and keeps what it decodes.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// pebbleReason is the message of an error answer of Pebble's API,
// {"type":"error","result":{"message":...}}, or the answer as it is.
func pebbleReason(body []byte) string {
	var answer struct {
		Result struct {
			Message string `json:"message"`
		} `json:"result"`
	}
	_ = json.Unmarshal(body, &answer)
	return cmp.Or(answer.Result.Message, string(body))
}

// pebbleRecorded says whether body is Pebble's answer to a notice it
// recorded, {"type":"sync","status-code":200,"status":"OK","result":{"id":
// "…"}}: whatever else answers 200 on its socket (another server, a proxy's
// page) recorded nothing.
func pebbleRecorded(body []byte) bool {
	var answer struct {
		Type       string `json:"type"`
		StatusCode int    `json:"status-code"`
		Result     struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	return json.Unmarshal(body, &answer) == nil && answer.Type == "sync" && answer.StatusCode == http.StatusOK && answer.Result.ID != ""
}

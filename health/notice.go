package health

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// A notice is what a program tells whoever reads its events of something no
// check sees: "config reloaded", "leader elected", "backup done". It is an
// event of type notice (EventNotice) with a key, which says what happened,
// and data, a few name=value pairs. Pebble's custom notices (pebble notify)
// are the model, and their keys are taken as they are. Each notice is an
// event of its own in the log, read in order with the others, unless it
// repeats its key within a repeat-after window (NotifyRepeating, Pebble's
// --repeat-after): then it counts an occurrence of the event before it and
// replaces its data, as Pebble's notices count theirs. Notices are kept
// apart from state changes, so that no flood of them pushes a check's
// change out of the log.

// The bounds of a notice, and why.
const (
	// MaxNoticeKey is the longest key, in bytes: Pebble's.
	MaxNoticeKey = 256
	// MaxNoticeEntries bounds how many name=value pairs a notice's data
	// has: a notice says what happened, in a few words; a document belongs
	// elsewhere.
	MaxNoticeEntries = 32
	// MaxNoticeName is the longest name of a data entry, in bytes.
	MaxNoticeName = 64
	// MaxNoticeValue is the longest value of a data entry, in bytes: a
	// check's output's (MaxOutput).
	MaxNoticeValue = MaxOutput
	// MaxNoticeData bounds the names and values of a notice's data
	// together, in bytes: Pebble's 4 KiB, which keeps the event log of
	// DefaultEventLog events within a few MiB however notices come.
	MaxNoticeData = 4 << 10
)

// validKey reports whether key is lower-case words of letters and digits
// joined by -, in one or more parts separated by /, the first of several
// parts a domain or not: "config-reloaded", "db/leader-elected",
// "example.com/config-reloaded". With a domain it is Pebble's form of a
// custom notice's key, which Pebble requires and vitals takes as it is:
//
//	^[a-z0-9]+(-[a-z0-9]+)*(\.[a-z0-9]+(-[a-z0-9]+)*)+(/[a-z0-9]+(-[a-z0-9]+)*)+$
//
// It is written out rather than a regular expression, which every program
// that imports the package would compile as it starts.
func validKey(key string) bool {
	parts := strings.Split(key, "/")
	for i, part := range parts {
		labels := []string{part}
		if i == 0 && len(parts) > 1 {
			labels = strings.Split(part, ".") // a domain's labels, or a part without one
		}
		for _, label := range labels {
			if !hyphenated(label) {
				return false
			}
		}
	}
	return true
}

// hyphenated reports whether s is words of lower-case letters and digits
// joined by single hyphens.
func hyphenated(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// validName reports whether name, a data entry's, is letters, digits and
// - _ . only.
func validName(name string) bool {
	return name != "" && strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") == ""
}

// NoticeError is why ValidateNotice or Notify refused a notice.
type NoticeError struct {
	// Entry names the data entry at fault; "" when it is the key, or the
	// data as a whole.
	Entry string
	msg   string
}

func (e *NoticeError) Error() string { return e.msg }

func noticeError(entry, format string, args ...any) *NoticeError {
	return &NoticeError{Entry: entry, msg: fmt.Sprintf(format, args...)}
}

// ValidateNotice reports whether Notify takes key and data, with a
// *NoticeError saying why not. A key is lower-case words of letters and
// digits joined by -, in parts separated by /, optionally after a domain
// (Pebble's form, "example.com/config-reloaded"; or "config-reloaded"), at
// most MaxNoticeKey bytes. Data has at most MaxNoticeEntries entries, each
// named by letters, digits and - _ . (at most MaxNoticeName bytes), each
// value UTF-8 text of at most MaxNoticeValue bytes, and at most
// MaxNoticeData bytes of names and values in all.
func ValidateNotice(key string, data map[string]string) error {
	switch {
	case key == "":
		return noticeError("", "no notice key: give one such as example.com/config-reloaded or config-reloaded")
	case len(key) > MaxNoticeKey:
		return noticeError("", "notice key of %d bytes: at most %d", len(key), MaxNoticeKey)
	case !validKey(key):
		return noticeError("", "notice key %q: want lower-case words of letters and digits joined by -, in parts separated by /, "+
			"after a domain or not: example.com/config-reloaded, db/leader-elected, config-reloaded", key)
	case len(data) > MaxNoticeEntries:
		return noticeError("", "%d data entries: at most %d", len(data), MaxNoticeEntries)
	}
	total := 0
	for _, name := range slices.Sorted(maps.Keys(data)) {
		value := data[name]
		switch {
		case len(name) > MaxNoticeName || !validName(name):
			return noticeError(name, "data name %q: want letters, digits and - _ . (at most %d bytes)", name, MaxNoticeName)
		case len(value) > MaxNoticeValue:
			return noticeError(name, "data %s: a value of %d bytes: at most %d", name, len(value), MaxNoticeValue)
		case !utf8.ValidString(value):
			return noticeError(name, "data %s: the value is not UTF-8 text", name)
		}
		total += len(name) + len(value)
	}
	if total > MaxNoticeData {
		return noticeError("", "data of %d bytes (names and values): at most %d", total, MaxNoticeData)
	}
	return nil
}

// Notify records a notice: an event of type notice (EventNotice) with key
// and data, for whoever reads the events (a Follower, Events; the agent's
// hooks, Kubernetes Events and API). It returns the event, with its ID and
// Time; a key or data that ValidateNotice refuses records nothing, and the
// error is a *NoticeError. The values are kept as a result's output is:
// redacted, escaped and capped (see WithRedaction and Result.Output); data
// is copied, so the caller may change its map afterwards.
func (m *Monitor) Notify(key string, data map[string]string) (Event, error) {
	e, _, err := m.NotifyRepeating(key, data, 0)
	return e, err
}

// NotifyRepeating is Notify with Pebble's repeat-after: when the last event
// of key the log keeps was recorded less than repeatAfter ago, the notice is
// a repeat of it, and no event is added. The event counts one more
// occurrence (Occurrences, LastOccurred) and takes data as its Data; it is
// returned so, with repeated true. Readers that read the event before see
// no change, as Pebble wakes no one for a notice within its repeat-after; a
// reader that reads it later sees the count. A repeatAfter of 0 or less
// repeats nothing: the notice is an event of its own, as with Notify.
func (m *Monitor) NotifyRepeating(key string, data map[string]string, repeatAfter time.Duration) (e Event, repeated bool, err error) {
	if err := ValidateNotice(key, data); err != nil {
		return Event{}, false, err
	}
	var kept map[string]string
	if len(data) > 0 {
		kept = make(map[string]string, len(data))
		for name, value := range data {
			kept[name] = m.output(value)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	if repeatAfter > 0 {
		if last := m.events.notices.find(m.events.lastNotice[key]); last != nil && now.Sub(last.Time) < repeatAfter {
			last.Occurrences = max(last.Occurrences, 1) + 1
			last.LastOccurred, last.Data = now, kept
			return *last, true, nil
		}
	}
	return m.emitLocked(Event{Time: now, Type: EventNotice, Key: key, Data: kept}), false, nil
}

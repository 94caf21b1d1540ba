package hooks

import (
	"fmt"
	"testing"

	"github.com/vitals-dev/vitals/health"
)

func TestCoalesceKeepsTheLatestOfEachCheckLevelAndKey(t *testing.T) {
	ev := func(id uint64, typ health.EventType, what string) health.Event {
		e := health.Event{ID: id, Type: typ}
		switch typ {
		case health.EventNotice:
			e.Key = what
		case health.EventLevelPassed, health.EventLevelFailed:
			e.Level = health.Ready
		case health.EventServiceStarted, health.EventServiceExited:
			e.Service = what
		default:
			e.Check = what
		}
		return e
	}
	for _, tc := range []struct {
		name string
		in   []health.Event
		want string // ids, and a notice's occurrences after a colon
	}{
		{"nothing", nil, "[]"},
		{"different checks all kept", []health.Event{ev(1, health.EventCheckFailed, "a"), ev(2, health.EventCheckFailed, "b")}, "[1 2]"},
		{"a flapping check's last", []health.Event{ev(1, health.EventCheckFailed, "a"), ev(2, health.EventCheckPassed, "a"),
			ev(3, health.EventCheckFailed, "b"), ev(4, health.EventCheckFailed, "a")}, "[3 4]"},
		{"a level's last", []health.Event{ev(1, health.EventLevelFailed, ""), ev(2, health.EventLevelPassed, "")}, "[2]"},
		{"a key's last, counting the others", []health.Event{ev(1, health.EventNotice, "k"), ev(2, health.EventNotice, "j"),
			ev(3, health.EventNotice, "k")}, "[2 3:2]"},
		{"services and stops always", []health.Event{ev(1, health.EventServiceExited, "api"), ev(2, health.EventServiceStarted, "api"),
			ev(3, health.EventStopping, ""), ev(4, health.EventServiceExited, "api")}, "[1 2 3 4]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := coalesce(tc.in)
			got := make([]string, len(out))
			for i, e := range out {
				got[i] = fmt.Sprint(e.ID)
				if e.Occurrences > 0 {
					got[i] += fmt.Sprint(":", e.Occurrences)
				}
			}
			if s := fmt.Sprint(got); s != tc.want {
				t.Fatalf("coalesce = %s, want %s", s, tc.want)
			}
		})
	}
}

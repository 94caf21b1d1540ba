package fleet

import (
	"fmt"
	"io"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/webpage"
)

// BenchmarkAViewOf5000Pods is the view that each change makes every open
// page read, at P8's size: 5,000 pods, ten Events each, joined, written and
// gzipped.
func BenchmarkAViewOf5000Pods(b *testing.B) {
	o := Options{Condition: "vitals.dev/ready", PodPort: "8558"}
	var pods []Row
	events := map[string][]Event{}
	for i := range 5000 {
		key := fmt.Sprintf("fleet/pod-%05d", i)
		p := pod(key, "True", true, map[string]string{"app": "web", "tier": "api"})
		pods = append(pods, PodRow(p, o))
		for j := range 10 {
			e := ev(key, "CheckFailed", fmt.Sprintf(`Readiness check "db" failed: dial tcp 10.0.0.9:5432: connect: connection refused (%d)`, j), 3, j)
			e.ResourceVersion = fmt.Sprint(i*10 + j)
			events[string(p.UID)] = append(events[string(p.UID)], EventOf(e, false))
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		rows := Rows(pods, func(uid string) []Event { return append([]Event(nil), events[uid]...) })
		view := Select(rows, Filter{})
		if _, err := webpage.WriteJSON(`"x"`, func(w io.Writer) error { return writeView(w, view) }); err != nil {
			b.Fatal(err)
		}
	}
}

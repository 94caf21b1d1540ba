package hooks

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// A notice's data that would be longer than Pebble takes is cut where it is
// longest, as little as it takes, and says so; data that fits is left as it
// is.
func TestANoticesDataIsCutToWhatPebbleTakes(t *testing.T) {
	quotes := strings.Repeat(`"`, 1024)     // 2 KiB in JSON
	control := strings.Repeat("\x01", 1024) // 6 KiB in JSON
	for _, tc := range []struct {
		name   string
		fields map[string]string
		cut    []string // the keys whose values are cut
	}{
		{"short", map[string]string{"check": "oidc", "output": "HTTP 503 <b>&</b>"}, nil},
		{"quotes, and a longer reason", map[string]string{"check": "oidc", "output": quotes, "reason": strings.Repeat("r", 2100)}, []string{"reason"}},
		{"an output of control bytes", map[string]string{"check": "oidc", "output": control}, []string{"output"}},
		{"two long values", map[string]string{"a": strings.Repeat("é", 1500), "b": strings.Repeat("x", 2500)}, []string{"a"}},
		{"not even one value empty is enough", map[string]string{"a": strings.Repeat("x", 2100), "b": strings.Repeat("y", 2100), "c": strings.Repeat("z", 2100)}, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := noticeData(tc.fields, maxNoticeData)
			if len(data) > maxNoticeData {
				t.Fatalf("%d bytes of JSON, more than %d", len(data), maxNoticeData)
			}
			var got map[string]string
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("%v: %s", err, data)
			}
			if tc.cut == nil {
				if !maps.Equal(got, tc.fields) || strings.Contains(string(data), `\u003c`) {
					t.Fatalf("%s, want the fields as they are, < and & unescaped", data)
				}
				return
			}
			for k, v := range got {
				wasCut := slices.Contains(tc.cut, k)
				switch {
				case !utf8.ValidString(v):
					t.Errorf("%s: cut inside a character", k)
				case wasCut && (!strings.HasSuffix(v, cutMark) || !strings.HasPrefix(tc.fields[k], strings.TrimSuffix(v, cutMark))):
					t.Errorf("%s = %.40q…, want the start of %.40q… and %s", k, v, tc.fields[k], cutMark)
				case !wasCut && v != tc.fields[k]:
					t.Errorf("%s = %.40q…, want it whole", k, v)
				}
			}
			// As little as it takes: less room left than the longest
			// escape (\u0001), which does not split.
			if room := maxNoticeData - len(data); room > 6 {
				t.Errorf("%d bytes of JSON: %d bytes more were cut than needed", len(data), room)
			}
		})
	}
}

func TestPebblesErrorsAreTheirMessage(t *testing.T) {
	for body, want := range map[string]string{
		`{"type":"error","status-code":400,"status":"Bad Request","result":{"message":"invalid key \"x\""}}`: `invalid key "x"`,
		`not JSON`:                     `not JSON`,
		`{"type":"error","result":{}}`: `{"type":"error","result":{}}`,
	} {
		if got := pebbleReason([]byte(body)); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}

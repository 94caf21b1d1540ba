//go:build !vitals_probe

package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/client"
)

// checks lists the checks as a table, JSON or YAML, those of one level
// with --level.
func TestChecksListsTheChecks(t *testing.T) {
	a := startAPIAgent(t)
	o := vitals("checks")
	o.expect(t, 0, "NAME         LEVEL  KIND       STATUS   FOR  RUNS  LAST\n", "")
	if !regexp.MustCompile(`(?m)^peer-config  ready  file       fail     \d+s +\d+ +failed: `+regexp.QuoteMeta(a.missing)+`$`).MatchString(o.stdout) ||
		!strings.Contains(o.stdout, "\nwork-loop    live   heartbeat  pending  -    0     -\n") {
		t.Fatalf("table:\n%s", o.stdout)
	}
	var checks []client.Check
	o = vitals("checks", "-o", "json")
	if err := json.Unmarshal([]byte(o.stdout), &checks); err != nil || len(checks) != 2 || checks[0].Period != client.Duration(50*time.Millisecond) {
		t.Fatalf("checks -o json: %v\n%s", err, o.stdout)
	}
	vitals("checks", "-o", "yaml").expect(t, 0, "- name: peer-config\n  level: ready\n  kind: file\n  status: fail\n", "")
	o = vitals("checks", "--level", "live")
	if o.code != 0 || strings.Contains(o.stdout, "peer-config") || !strings.Contains(o.stdout, "work-loop") {
		t.Fatalf("--level live: %+v", o)
	}
	vitals("checks", "-o", "xml").expect(t, 2, "", `vitals: invalid argument "xml" for "-o, --output" flag: use text, wide, json or yaml`)
}

//go:build !vitals_probe

package cli

import "testing"

// beat is quiet, and a heartbeat it beats passes; a check that is no
// heartbeat, or not there, is bad usage.
func TestBeatBeatsAHeartbeat(t *testing.T) {
	startAPIAgent(t)
	vitals("beat", "work-loop").expect(t, 0, "", "")
	eventually(t, 0, "status:        pass for ", "", "check", "work-loop")
	vitals("beat", "peer-config").expect(t, 2, "", `vitals: check "peer-config" is a file check, not a heartbeat`)
	vitals("beat", "nope").expect(t, 2, "", `vitals: no such check "nope"`)
}

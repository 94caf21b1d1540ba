//go:build !vitals_probe

package cli

import "testing"

// health exits 1 with every reason while its level is not ready, 0 once it
// is; a level it does not know is bad usage.
func TestHealthExitsByTheLevelsStatus(t *testing.T) {
	a := startAPIAgent(t)
	eventually(t, 1, "", "readyz check failed: peer-config failed: "+a.missing+"\n", "health")
	vitals("health", "--level", "live").expect(t, 0, "livez check passed\n", "")
	vitals("health", "--level", "sometimes").expect(t, 2, "", `vitals: --level: unknown level "sometimes"`)
	vitals("health", "-o", "json").expect(t, 1, `"level": "ready",`+"\n"+`  "ok": false,`, "readyz check failed")
	a.writeConf(t)
	eventually(t, 0, "readyz check passed\n", "", "health")
}

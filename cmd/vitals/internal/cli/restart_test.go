//go:build !vitals_probe

package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
)

// An agent of one service (service:, named by its command's base name)
// restarts it without a name, as before it could run several, and with it.
func TestRestartWithoutANameRestartsTheOneService(t *testing.T) {
	sock := filepath.Join(vitalstest.ShortDir(t), "vitals.sock")
	startAgent(t, fmt.Sprintf("listen: 127.0.0.1:0\napi: %s\nservice:\n  command: [sleep, \"3600\"]\n", sock))
	t.Setenv("VITALS_API", sock)
	// It may not have started yet: 409 until it has.
	eventually(t, 0, "restarted sleep: pid ", "", "restart").expect(t, 0, " (restart 1)\n", "")
	vitals("restart", "sleep").expect(t, 0, " (restart 2)\n", "")
}

// With several services, restart names one: without a name, or with
// another, it exits 2 saying which there are.
func TestRestartNamesOneOfSeveralServices(t *testing.T) {
	sock := filepath.Join(vitalstest.ShortDir(t), "vitals.sock")
	startAgent(t, fmt.Sprintf(`
listen: 127.0.0.1:0
api: %s
services:
  web:
    command: [sleep, "3600"]
  worker:
    command: [sleep, "3600"]
`, sock))
	t.Setenv("VITALS_API", sock)
	eventually(t, 0, "restarted worker: pid ", "", "restart", "worker").expect(t, 0, " (restart 1)\n", "")
	vitals("restart").expect(t, 2, "", "vitals: this agent runs 2 services: name one (vitals restart NAME, POST /v1/services/NAME/restart): web, worker\n")
	vitals("restart", "db").expect(t, 2, "", "vitals: no service \"db\": this agent runs web, worker\n")
	vitals("restart", "web", "worker").expect(t, 2, "", "accepts at most 1 arg(s), received 2")

	o := eventually(t, 0, `"type": "service-started"`, "", "restart", "web", "-o", "json")
	var e health.Event
	if err := json.Unmarshal([]byte(o.stdout), &e); err != nil || e.Service != "web" || e.Restarts != 1 || e.PID == 0 {
		t.Fatalf("restart web -o json: %v\n%s", err, o.stdout)
	}
}

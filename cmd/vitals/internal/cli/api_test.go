//go:build !vitals_probe

package cli

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
)

// No agent there: exit 1, saying where the command looked.
func TestACommandWithNoAgentThereExitsOne(t *testing.T) {
	dir := vitalstest.ShortDir(t)
	vitals("checks", "--api", filepath.Join(dir, "none.sock")).expect(t, 1, "",
		"vitals checks: reach the agent at "+filepath.Join(dir, "none.sock")+": dial unix ")
}

func TestTheAPICommandsOverTCPWithAToken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "tcp://" + ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600)
	startAgent(t, fmt.Sprintf("listen: 127.0.0.1:0\napi: %s\napi-token-file: %s\nchecks:\n  loop: {heartbeat: {ttl: 1h}}\n", addr, tokenFile))

	vitals("beat", "loop", "--api", addr, "--api-token-file", tokenFile).expect(t, 0, "", "")
	vitals("checks", "--api", addr).expect(t, 2, "", "vitals: this API needs a bearer token")
	t.Setenv("VITALS_API_TOKEN", "s3cre")
	vitals("checks", "--api", addr).expect(t, 2, "", "vitals: wrong bearer token")
	t.Setenv("VITALS_API_TOKEN", "s3cret")
	t.Setenv("VITALS_API", addr)
	eventually(t, 0, "readyz check passed", "", "health")
	vitals("checks", "--api-token-file", filepath.Join(dir, "none")).expect(t, 2, "", "vitals: --api-token-file: open ")
}

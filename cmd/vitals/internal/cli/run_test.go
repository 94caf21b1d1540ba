//go:build !vitals_probe

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/agent"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/api"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
)

// vitals run serves /metrics beside the probe endpoints.
func TestRunServesMetricsBesideTheProbeEndpoints(t *testing.T) {
	a := startAPIAgent(t)
	vitals("beat", "work-loop")
	waitStatus(t, "work-loop", health.Pass)
	res, err := http.Get("http://" + a.listen + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`vitals_check_up{check="work-loop",level="live"} 1`,
		`vitals_check_status{check="work-loop",status="pass"} 1`,
		`vitals_check_transitions_total{check="peer-config",to="fail"} `,
		`vitals_level_up{level="live"} 1`,
		`vitals_check_duration_seconds_count{check="peer-config"} `,
		"go_goroutines ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics has no %q:\n%s", want, body)
		}
	}
}

func TestRunNeedsItsTokenFileAndAFreeSocket(t *testing.T) {
	dir := vitalstest.ShortDir(t)
	// The loader reads the token file, so a file that validates is one whose API starts.
	_, err := config.Parse("vitals.yaml", []byte(fmt.Sprintf("api: tcp://127.0.0.1:1\napi-token-file: %s\nchecks:\n  loop: {heartbeat: {ttl: 1h}}\n",
		filepath.Join(dir, "none"))), os.LookupEnv, kinds.All)
	if err == nil || err.Error() != "vitals.yaml:2:17: api-token-file: open "+filepath.Join(dir, "none")+": no such file or directory" {
		t.Fatalf("%v", err)
	}

	sock := filepath.Join(dir, "vitals.sock")
	taken, err := api.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	go func() {
		for {
			c, err := taken.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	c, err := config.Parse("vitals.yaml", []byte(fmt.Sprintf("listen: 127.0.0.1:0\napi: %s\nchecks:\n  loop: {heartbeat: {ttl: 1h}}\n", sock)), os.LookupEnv, kinds.All)
	if err != nil {
		t.Fatal(err)
	}
	err = runAgent(context.Background(), c, slog.New(slog.DiscardHandler))
	if !errors.As(err, new(*agent.RunError)) || err.Error() != "vitals run: serve the management API on "+sock+" (api: in vitals.yaml): something answers on "+sock+" already: is another vitals running?" {
		t.Fatalf("%v", err)
	}
}

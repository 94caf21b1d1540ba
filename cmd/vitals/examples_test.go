package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps/depstest"
	"github.com/vitals-dev/vitals/internal/testenv"
)

// The runnable examples of the README and docs/agent.md run, and show what
// those pages say they show.
func TestTheREADMEExamplesShowWhatTheySay(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, "the examples need curl")
	}
	for _, tc := range []struct {
		script string
		need   func(t *testing.T) // ends the test unless what the script needs is here
		want   []string
	}{
		{"examples/quickstart/run.sh", nil, []string{"(HTTP 503)", "(HTTP 200)", "[-]peer-config", "[+]peer-config ok"}},
		{"examples/kubeflow/run.sh", nil, []string{
			"authservice answers 302",
			"service-exited  authservice",
			": check oidc failed",
			"checks-reset: authservice started again (restart 1, pid",
			"restarts 1",
			`"type":"service-exited"`,
		}},
		{"examples/stackstorm/run.sh", needRabbitMQAndPika, []string{
			// Startup waits for its line.
			`[-]started failed: no line matching "RulesEngine started" yet` + "\nstartupz check failed\n(HTTP 503)",
			"[+]started ok\nstartupz check passed\n(HTTP 200)",
			// Readiness fails for each reason, until the last goes.
			"[-]mq-connected failed: no connection to 127.0.0.1:",
			`queue "st2.trigger_instances_dispatch.rules_engine" does not exist`,
			"[-]notified failed: no READY=1 since the workload started",
			`[-]consumers failed: queue "st2.trigger_instances_dispatch.rules_engine": 0 consumers, 0 messages, fewer than 1 (min-consumers)`,
			"[-]mq-connected failed: pass, stable in ",
			"[+]mq-connected ok\n  [+]consumers ok\n  [+]notified ok\n  [+]mq-errors ok\n  [+]pong ok\n  [+]shutdown ok\n  readyz check passed\n  (HTTP 200)",
			// Its connection lost: the line fails readiness, before any
			// other check has seen it go, and a new connection passes
			// once stable.
			`level-failed  ready: check "mq-errors" is fail: line matching "connection to MQ lost"`,
			"check-passed  mq-connected (ready) fail -> pass: stable for 3s: 1 connection to 127.0.0.1:",
			// Stuck: its pings go unanswered, and it is restarted.
			`check-failed  pong (live) warn -> fail: timed out after 500ms: ping "st2.rulesengine.ping": no answer`,
			"signal SIGTERM: check pong failed",
			"checks-reset: rulesengine.py started again (restart 1, pid",
			"ready: GET http://127.0.0.1:18559/readyz (HTTP 200",
		}},
	} {
		t.Run(filepath.Base(filepath.Dir(tc.script)), func(t *testing.T) {
			if tc.need != nil {
				tc.need(t)
			}
			out, err := exec.Command("bash", filepath.Join("..", "..", tc.script)).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", tc.script, err, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(string(out), want) {
					t.Errorf("%s's output lacks %q:\n%s", tc.script, want, out)
				}
			}
		})
	}
}

// needRabbitMQAndPika ends t unless this machine has what
// examples/stackstorm/run.sh needs beside Go and curl: Debian's
// rabbitmq-server, and pika in Debian's python3 (python3-pika).
func needRabbitMQAndPika(t *testing.T) {
	depstest.AMQP.Program(t)
	if out, err := exec.Command("/usr/bin/python3", "-c", "import pika").CombinedOutput(); err != nil {
		testenv.Missing(t, "/usr/bin/python3 cannot import pika (apt-get install python3-pika): %v: %s", err, out)
	}
}

package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps/depstest"
	"github.com/vitals-dev/vitals/internal/testenv"
)

// The runnable examples of the README and docs/agent.md run, and show what
// those pages say they show, in the order they say it: each line wanted is
// looked for after the one before; and each pattern of lines matches a line.
func TestTheREADMEExamplesShowWhatTheySay(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, "the examples need curl")
	}
	for _, tc := range []struct {
		script string
		need   func(t *testing.T) // ends the test unless what the script needs is here
		want   []string
		lines  []string // regular expressions, each of one line, anywhere
	}{
		{"examples/quickstart/run.sh", nil, []string{"[-]peer-config", "(HTTP 503)", "[+]peer-config ok", "(HTTP 200)"}, nil},
		{"examples/kubeflow/run.sh", nil, []string{
			// Pebble's ready level, which Juju's readiness probe asks, is
			// vitals's readiness: down while the authservice answers 503,
			// with vitals's reason, and up once vitals is ready.
			"status: down\n",
			"non-2xx status code 503; [-]setup pending: ",
			"$ pebble health --level=ready\nunhealthy\n(exit 1; Juju's probe of /v1/health?level=ready gets 502)\n",
			"authservice answers 302",
			"$ pebble health --level=ready\nhealthy\n(exit 0; Juju's probe of /v1/health?level=ready gets 200)\n",
			// The charm is woken: Pebble has the notice of the exit, whose
			// data says why.
			"custom  vitals.dev/service-exited",
			"key: vitals.dev/service-exited\n",
			"occurrences: 1\n",
			"    reason: check oidc failed\n    service: authservice\n    signal: SIGTERM\n",
			"authservice answers 302",
			"service-exited  authservice",
			": check oidc failed",
			"authservice started again (restart 1, pid", // checks-reset
			"restarts 1",
			// vitals freezes: it is not ready at once, and Pebble's
			// vitals-alive check restarts it; the frozen vitals and its
			// authservice are gone, and the new ones serve.
			"$ kill -STOP ",
			"unhealthy\n(exit 1; Juju's probe of /v1/health?level=ready gets 502)\n",
			`Check "vitals-alive" threshold 3 hit`,
			`Service "authservice" on-check-failure action is "restart", terminating process before restarting`,
			`Service "authservice" exited after check failure, restarting`,
			") is gone, and its authservice (",
			"authservice answers 302",
			"$ pebble health --level=alive\nhealthy\n(exit 0; Juju's probe of /v1/health?level=alive gets 200)\n",
			"$ pebble notices --type custom",
			"key: vitals.dev/service-exited\n",
			"occurrences: 2\n",
			"    reason: stopping\n    service: authservice\n",
		}, []string{
			`^vitals-ready +ready +enabled +down +\d+ +\d+/1 +\d+ \(check timed out after 250ms\)$`,
			`^vitals is pid \d+, the authservice \d+; the frozen vitals \(\d+\) is gone, and its authservice \(\d+\) gone$`,
			// One notice for each type, the second exit (the restarted
			// vitals stopping) one more occurrence of the first's.
			`^\d+ +\d+ +custom +vitals\.dev/check-failed .* [3-5]$`,
			`^\d+ +\d+ +custom +vitals\.dev/level-failed .* \d+$`,
			`^\d+ +\d+ +custom +vitals\.dev/service-exited .* 2$`,
		}},
		{"examples/stackstorm/run.sh", needRabbitMQAndPika, []string{
			// Startup waits for its line.
			`no line matching "RulesEngine started" yet` + "\nstartupz check failed\n(HTTP 503)",
			"[+]started ok\nstartupz check passed\n(HTTP 200)",
			// Readiness fails for each reason, until the last goes: the
			// connection, the queue, READY=1, the consumer, stability.
			"[-]mq-connected failed: no connection to 127.0.0.1:",
			`queue "st2.trigger_instances_dispatch.rules_engine" does not exist`,
			"[-]notified pending: 1 of 3 failures: no READY=1 since the workload started",
			"[-]mq-connected failed: pass, stable in ",
			`[-]consumers failed: queue "st2.trigger_instances_dispatch.rules_engine": 0 consumers, 0 messages, fewer than 1 (min-consumers)`,
			"[+]mq-connected ok\n  [+]consumers ok\n  [+]notified ok\n  [+]mq-errors ok\n  [+]pong ok\n  [+]shutdown ok\n  readyz check passed\n  (HTTP 200)",
			// Its connection lost: the line fails readiness, and a new
			// connection passes once it has held for stable-for.
			"$ touch $DIR/mq-lost",
			`[-]mq-errors failed: line matching "connection to MQ lost"`,
			"[-]mq-connected failed: pass, stable in ",
			"readyz check passed\n  (HTTP 200)",
			// Stuck: its pings go unanswered; it is restarted, and ready
			// again.
			"$ touch $DIR/stuck",
			"ready: GET http://127.0.0.1:18559/readyz (HTTP 200",
			// The events: the line failed readiness before any other
			// check saw the connection go, the connection check was the
			// last to pass again, and the stuck instance was restarted.
			`level-failed  ready: check "mq-errors" is fail: line matching "connection to MQ lost"`,
			`level-passed  ready: check "mq-connected" is pass: `,
			`check-failed  pong (live) warn -> fail: timed out after 500ms: ping "st2.rulesengine.ping": no answer`,
			"service-exited  rulesengine.py pid ",
			" signal SIGTERM: check pong failed",
			"checks-reset  rulesengine.py: rulesengine.py started again (restart 1, pid",
		}, nil},
	} {
		t.Run(filepath.Base(filepath.Dir(tc.script)), func(t *testing.T) {
			if tc.need != nil {
				tc.need(t)
			}
			out, err := exec.Command("bash", filepath.Join("..", "..", tc.script)).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", tc.script, err, out)
			}
			rest, after := string(out), "the start"
			for _, want := range tc.want {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Errorf("%s's output lacks %q after %q:\n%s", tc.script, want, after, out)
					continue
				}
				rest, after = rest[i+len(want):], want
			}
			for _, line := range tc.lines {
				if !regexp.MustCompile("(?m)" + line).Match(out) {
					t.Errorf("%s's output has no line matching %s:\n%s", tc.script, line, out)
				}
			}
		})
	}
}

// A newcomer whose port 8558 is taken by another server sees vitals's own
// error, not that server's answers: the quickstart says vitals did not
// start, shows vitals's log, keeps it where it says, and fails.
func TestTheQuickstartSaysWhyVitalsDidNotStartWhenItsPortIsTaken(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, "the examples need curl")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:8558") // examples/quickstart/vitals.yaml's listen:
	if err != nil {
		t.Fatalf("the quickstart's port: %v", err)
	}
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "another server's answer")
	}))
	other.Listener.Close()
	other.Listener = ln
	other.Start()
	defer other.Close()

	out, err := exec.Command("bash", filepath.Join("..", "..", "examples/quickstart/run.sh")).CombinedOutput()
	if err == nil || strings.Contains(string(out), "another server's answer") {
		t.Fatalf("%v\n%s\nwant it to fail without showing the other server's answers", err, out)
	}
	kept := regexp.MustCompile(`vitals's log, kept in (\S+):`).FindSubmatch(out)
	if kept == nil {
		t.Fatalf("no path of the kept log:\n%s", out)
	}
	defer os.Remove(string(kept[1]))
	for _, want := range []string{"vitals did not start: it exited with status 1",
		"  vitals run: serve the probe endpoints: listen tcp 127.0.0.1:8558: bind: address already in use"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if log, err := os.ReadFile(string(kept[1])); err != nil || !strings.Contains(string(log), "address already in use") {
		t.Errorf("the kept log %s: %v\n%s", kept[1], err, log)
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

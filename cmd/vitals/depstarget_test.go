package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps/depstest"
)

// Every dependency kind of the agent is a target of vitals probe and vitals
// wait, against a real server; its password shows in no output (text, -v,
// -o json, a failure, a wait's lines), and the probe build says where its
// targets are, without it either.
func TestProbeAndWaitReachEveryDependencyKindWithoutShowingItsPassword(t *testing.T) {
	for _, k := range []depstest.Kind{depstest.Postgres, depstest.Redis, depstest.AMQP, depstest.NATS} {
		t.Run(k.Name, func(t *testing.T) {
			t.Parallel()
			s := k.Private(t)
			good, bad := k.URL(s.Addr, k.Password), k.URL(s.Addr, "wrong-Pw-0815")
			secrets := []string{k.Password, "wrong-Pw-0815"}
			shows := func(what string, r run) {
				t.Helper()
				for _, secret := range secrets {
					if strings.Contains(r.stdout+r.stderr, secret) {
						t.Errorf("%s shows the password %q:\nstdout: %s\nstderr: %s", what, secret, r.stdout, r.stderr)
					}
				}
			}
			shown := k.Name + " " + strings.Replace(good, k.Password, "xxxxx", 1)

			r := vitalsRun(t, "probe", good)
			r.expect(t, 0, "", "")
			if r.stdout+r.stderr != "" {
				t.Errorf("a passing probe is not quiet: %q %q", r.stdout, r.stderr)
			}
			r = vitalsRun(t, "probe", "-v", good)
			r.expect(t, 0, "ok: "+shown+": ", "")
			shows("-v", r)

			r = vitalsRun(t, "probe", "-o", "json", good)
			r.expect(t, 0, "", "")
			var res struct {
				Target, Kind, Output string
				OK                   bool
			}
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || !res.OK || res.Kind != k.Name || res.Target != shown {
				t.Errorf("-o json: %v\n%s", err, r.stdout)
			}
			shows("-o json", r)

			// RabbitMQ takes 3s to refuse a login.
			r = vitalsRun(t, "probe", "--timeout", "10s", "-o", "json", bad)
			r.expect(t, 1, `"ok": false`, "authentication failed")
			shows("a refused login", r)

			r = vitalsRun(t, "wait", "--timeout", "30s", good, "tcp://"+s.Addr)
			r.expect(t, 0, "", "ready: "+shown+" (")
			shows("wait", r)
			r = vitalsRun(t, "wait", "--timeout", "1s", "--probe-timeout", "5s", "-v", bad)
			r.expect(t, 1, "", "vitals wait: timed out after 1s; not ready:\n  "+k.Name+" "+strings.Replace(bad, "wrong-Pw-0815", "xxxxx", 1)+": ")
			shows("a wait that times out", r)

			r = binaryRun(t, vitalsProbe, "probe", good)
			scheme, _, _ := strings.Cut(good, ":")
			r.expect(t, 2, "", scheme+":// targets are in the full build of vitals (built without -tags vitals_probe); this is the probe build")
			shows("the probe build", r)
		})
	}
}

// A password that libpq's environment gives is hidden as one in the URL is.
func TestAPostgresPasswordFromTheEnvironmentShowsInNoOutput(t *testing.T) {
	s := depstest.Postgres.Private(t)
	url := "postgres://vitals@" + s.Addr + "/postgres?sslmode=disable"
	for _, tt := range []struct {
		password string
		code     int
		want     string
	}{
		{depstest.PostgresPassword, 0, "ok: postgres " + url + ": SELECT 1 in "},
		{"wrong-Pw-0815", 1, `password authentication failed for user "vitals"`},
	} {
		cmd := exec.Command(vitals, "probe", "-v", url)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+tt.password)
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != tt.code || !strings.Contains(string(out), tt.want) || strings.Contains(string(out), tt.password) {
			t.Errorf("PGPASSWORD %s: exit %d, %s; want exit %d and %q, without the password", tt.password, cmd.ProcessState.ExitCode(), out, tt.code, tt.want)
		}
	}
}

// vitals probe and vitals wait close the connection a dependency's probe
// keeps: the broker sees the client say goodbye, not a socket cut when the
// process ended.
func TestProbeAndWaitCloseTheConnectionTheyKept(t *testing.T) {
	s := depstest.AMQP.Private(t)
	url := depstest.AMQP.URL(s.Addr, depstest.AMQPPassword)
	vitalsRun(t, "probe", url).expect(t, 0, "", "")
	vitalsRun(t, "wait", url).expect(t, 0, "", "ready: ")
	// RabbitMQ logs each connection's end as it handles it, each line with
	// the connection's process: vitals's connections are those it names.
	var named, ended, cut map[string]bool
	read := func() {
		named, ended, cut = map[string]bool{}, map[string]bool{}, map[string]bool{}
		for _, m := range rabbitLine.FindAllStringSubmatch(s.Log(), -1) {
			conn, said := m[1], m[2]
			switch {
			case strings.Contains(said, "has a client-provided name: vitals"):
				named[conn] = true
			case strings.HasPrefix(said, "closing AMQP connection"):
				ended[conn] = true
			case strings.Contains(said, "client unexpectedly closed TCP connection"):
				cut[conn] = true
			}
		}
	}
	done := func() bool {
		for conn := range named {
			if !ended[conn] {
				return false
			}
		}
		return len(named) == 2
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		read()
		if done() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RabbitMQ did not log the end of vitals's 2 connections within 20s:\n%s", s.Log())
		}
	}
	for conn := range named {
		if cut[conn] {
			t.Errorf("connection %s was cut, not closed:\n%s", conn, s.Log())
		}
	}
}

// rabbitLine is a line of RabbitMQ's log: the process it is about, and
// what it says.
var rabbitLine = regexp.MustCompile(`(?m)^\S+ \S+ \[\w+\] (<[0-9.]+>) (.*)$`)

// A log or heartbeat target is a usage error that says why neither runs
// once, in both builds.
func TestLogAndHeartbeatTargetsSayWhyTheyDoNotRunOnce(t *testing.T) {
	for _, binary := range []string{vitals, vitalsProbe} {
		binaryRun(t, binary, "probe", "log://app").expect(t, 2, "",
			`vitals: target "log://app": a log check reads the output of the workload that vitals run supervises, as it comes, and vitals probe and vitals wait have no workload: give it as a log: check in vitals.yaml`)
		binaryRun(t, binary, "wait", "tcp://"+closedPort(t), "heartbeat://work-loop").expect(t, 2, "",
			`vitals: target "heartbeat://work-loop": a heartbeat is beaten by the workload (vitals beat NAME) and judged by the vitals run it beats, and there is no beat to look at once: ask that vitals with vitals check NAME`)
	}
}

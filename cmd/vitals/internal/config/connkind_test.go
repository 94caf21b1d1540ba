package config_test

import (
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/procnet"
)

const (
	connectionFields = "any-process, for, min, pid-file, process, remote"
	listeningFields  = "address, any-process, pid-file, port, process"
)

func TestBadConnectionAndListeningChecksSayWhatAndWhere(t *testing.T) {
	expectRefused(t, []refusal{
		{"no remote", y(
			"checks:",
			"  mq:",
			"    connection: {min: 2}",
		), []string{
			`vitals.yaml:3:17: checks.mq.connection: remote is required: HOST:PORT, or *:PORT for any host`,
		}},
		{"a remote without a port", y(
			"checks:",
			"  mq:",
			"    connection: {remote: rabbitmq}",
		), []string{
			`vitals.yaml:3:26: checks.mq.connection.remote: "rabbitmq": want HOST:PORT, or *:PORT for any host`,
		}},
		{"a remote without a host, a port out of range", y(
			"checks:",
			"  mq:",
			"    connection: {remote: \":5672\"}",
			"  mq2:",
			"    connection: {remote: \"rabbitmq:70000\"}",
		), []string{
			`vitals.yaml:3:26: checks.mq.connection.remote: ":5672" has no host: give one, or * for any`,
			`vitals.yaml:5:26: checks.mq2.connection.remote: "rabbitmq:70000": port "70000" is not a number from 1 to 65535`,
		}},
		{"a min below 1, a negative for, all at once", y(
			"checks:",
			"  mq:",
			"    connection: {remote: \"rabbitmq:5672\", min: 0, for: -10s}",
		), []string{
			`vitals.yaml:3:48: checks.mq.connection.min: 0 is not at least 1`,
			`vitals.yaml:3:56: checks.mq.connection.for: -10s is negative`,
		}},
		{"a min in words", y(
			"checks:",
			"  mq:",
			"    connection: {remote: \"rabbitmq:5672\", min: two}",
		), []string{
			`vitals.yaml:3:48: checks.mq.connection.min: want a whole number, got "two"`,
		}},
		{"both a pid-file and a process", y(
			"checks:",
			"  mq:",
			"    connection:",
			"      remote: \"rabbitmq:5672\"",
			"      pid-file: /run/st2rulesengine.pid",
			"      process: st2rulesengine",
		), []string{
			`vitals.yaml:6:16: checks.mq.connection.process: pid-file names the processes already: give one of the two`,
		}},
		{"a process and any-process, even false", y(
			"checks:",
			"  mq:",
			"    connection: {remote: \"rabbitmq:5672\", process: st2rulesengine, any-process: true}",
			"  mq2:",
			"    connection: {remote: \"rabbitmq:5672\", process: st2rulesengine, any-process: false}",
		), []string{
			`vitals.yaml:3:81: checks.mq.connection.any-process: process names the processes already: give one of the two`,
			`vitals.yaml:5:81: checks.mq2.connection.any-process: process names the processes already: give one of the two`,
		}},
		{"a process given as a path, an empty pid-file", y(
			"checks:",
			"  mq:",
			"    connection: {remote: \"rabbitmq:5672\", process: /opt/st2/bin/st2rulesengine}",
			"  mq2:",
			"    connection: {remote: \"rabbitmq:5672\", pid-file: \"\"}",
		), []string{
			`vitals.yaml:3:52: checks.mq.connection.process: "/opt/st2/bin/st2rulesengine" is a path: give the process's name, as ps shows it (its file's base name)`,
			`vitals.yaml:5:53: checks.mq2.connection.pid-file: empty: give the path of a file that holds a pid`,
		}},
		{"an unknown field", y(
			"checks:",
			"  mq:",
			"    connection: {remote: \"rabbitmq:5672\", host: rabbitmq}",
		), []string{
			`vitals.yaml:3:43: checks.mq.connection.host: unknown field "host" (want ` + connectionFields + `)`,
		}},
		{"not a mapping", y(
			"checks:",
			"  mq:",
			"    connection: \"rabbitmq:5672\"",
		), []string{
			`vitals.yaml:3:17: checks.mq.connection: want a mapping of ` + connectionFields + `, got "rabbitmq:5672"`,
		}},
		{"no port", y(
			"checks:",
			"  web:",
			"    listening: {address: 0.0.0.0}",
		), []string{
			`vitals.yaml:3:16: checks.web.listening: port is required`,
		}},
		{"a port out of range, an address that is a name", y(
			"checks:",
			"  web:",
			"    listening: {port: 0}",
			"  web2:",
			"    listening: {port: 65536}",
			"  web3:",
			"    listening: {port: 8080, address: localhost}",
		), []string{
			`vitals.yaml:3:23: checks.web.listening.port: 0 is not at least 1`,
			`vitals.yaml:5:23: checks.web2.listening.port: 65536 is too large: at most 65535`,
			`vitals.yaml:7:38: checks.web3.listening.address: "localhost" is not an IP address`,
		}},
		{"a listening check's pid-file and any-process", y(
			"checks:",
			"  web:",
			"    listening: {port: 8080, pid-file: /run/nginx.pid, any-process: true}",
		), []string{
			`vitals.yaml:3:68: checks.web.listening.any-process: pid-file names the processes already: give one of the two`,
		}},
		{"an unknown field of listening", y(
			"checks:",
			"  web:",
			"    listening: {port: 8080, host: 0.0.0.0}",
		), []string{
			`vitals.yaml:3:29: checks.web.listening.host: unknown field "host" (want ` + listeningFields + `)`,
		}},
	})
}

func TestTheSpecsConnectionAndListeningChecks(t *testing.T) {
	c := mustParse(t, y(
		"service: {command: [sleep, \"1\"]}",
		"checks:",
		"  mq:",
		"    connection: {remote: \"rabbitmq:5672\"}",
		"  mq-stable:",
		"    connection: {remote: \"*:5672\", min: 2, for: 30s, process: st2rulesengine}",
		"  web:",
		"    listening: {port: 8080, address: \"::\", pid-file: /run/nginx.pid}",
		"  pod:",
		"    listening: {port: \"${PORT}\", any-process: true}",
	))
	want := []any{
		procnet.ConnectionSpec{Remote: "rabbitmq:5672", Min: 1},
		procnet.ConnectionSpec{Remote: "*:5672", Min: 2, For: 30 * time.Second, Processes: procnet.Processes{Name: "st2rulesengine"}},
		procnet.ListeningSpec{Port: 8080, Address: "::", Processes: procnet.Processes{PIDFile: "/run/nginx.pid"}},
		procnet.ListeningSpec{Port: 8080, Processes: procnet.Processes{AnyProcess: true}},
	}
	for i, ch := range c.Checks {
		if ch.Spec != want[i] {
			t.Errorf("check %s: %+v, want %+v", ch.Name, ch.Spec, want[i])
		}
		// Built for a workload, the check that names no processes asks for
		// its pid; built with none, it says what it needs, where it is.
		var asked []string
		checker, err := kinds.All.Build(ch, kinds.Env{Workload: func(name string) func() int {
			asked = append(asked, name)
			return func() int { return 0 }
		}})
		if err != nil || checker == nil || (i == 0) != (len(asked) == 1 && asked[0] == "mq") {
			t.Errorf("check %s: built %v, %v, asked for the workload's pid %q", ch.Name, checker, err, asked)
		}
		_, err = kinds.All.Build(ch, kinds.Env{})
		if i == 0 {
			want := "vitals.yaml:4:17: checks.mq.connection: counts the sockets of the workload's processes, as it names no others (pid-file, process or any-process): give service: in the file, or the command after --"
			if err == nil || err.Error() != want {
				t.Errorf("check mq built with no workload: %v, want %s", err, want)
			}
		} else if err != nil {
			t.Errorf("check %s, which names its processes, built with no workload: %v", ch.Name, err)
		}
	}
}

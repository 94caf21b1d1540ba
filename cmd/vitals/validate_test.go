package main

import (
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
)

// A file for a machine whose commands this one lacks: vitals validate looks
// its exec checks' and hooks' commands up, and --offline does not, for a CI
// job on another image; everything else is checked all the same.
func TestValidateOfflineLooksUpNoCommandOfTheFile(t *testing.T) {
	const file = `service:
  command: [vitals-test-no-such-workload]
api: tcp://127.0.0.1:8559
api-token-file: /vitals-test/no/such/token
checks:
  cache:
    exec: {command: [vitals-test-no-such-check, --ping], dir: /vitals-test/no/such/dir}
  web:
    http: {url: "https://localhost:8443/", ca-file: /vitals-test/no/such/ca.pem, cert: /vitals-test/c.pem, key: /vitals-test/k.pem}
  cert:
    tls: {address: "localhost:8443", ca-file: /vitals-test/no/such/ca.pem}
hooks:
  - on: check-failed
    exec: [vitals-test-no-such-hook]
`
	path := writeConfig(t, file)
	r := vitalsRun(t, "validate", "-c", path)
	r.expect(t, 2, "", path+`:4:17: api-token-file: open /vitals-test/no/such/token: no such file or directory`+"\n"+
		path+`:7:11: checks.cache.exec: command "vitals-test-no-such-check" not found in $PATH`+"\n"+
		path+`:9:11: checks.web.http: CA file: open /vitals-test/no/such/ca.pem: no such file or directory`+"\n"+
		path+`:11:10: checks.cert.tls: CA file: open /vitals-test/no/such/ca.pem: no such file or directory`+"\n"+
		path+`:14:11: hooks[0].exec: command "vitals-test-no-such-hook" not found in $PATH`+"\n")
	if strings.Contains(r.stderr, "workload") {
		t.Errorf("validate looked up the service's command, which only vitals run does:\n%s", r.stderr)
	}

	vitalsRun(t, "validate", "--offline", "-c", path).expect(t, 0, "ok: "+path+": 3 checks\n", "")
	r = vitalsRun(t, "validate", "--offline", "-c", path, "--print")
	r.expect(t, 0, config.SchemaComment+"\n", "")
	for _, want := range []string{`  command: ["vitals-test-no-such-workload"]`, "    exec: {command: [vitals-test-no-such-check, --ping], dir: /vitals-test/no/such/dir}",
		`    exec: {command: ["vitals-test-no-such-hook"], timeout: 10s}`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--offline --print lacks %q:\n%s", want, r.stdout)
		}
	}

	worse := writeConfig(t, strings.Replace(strings.Replace(file, "    exec:", "    level: liveness\n    exec:", 1), ", key: /vitals-test/k.pem", "", 1)+
		"  - on: check-failed\n    exec: [\"\"]\n")
	vitalsRun(t, "validate", "--offline", "-c", worse).expect(t, 2, "",
		worse+`:7:12: checks.cache.level: unknown level "liveness" (want startup, live or ready)`+"\n"+
			worse+`:10:11: checks.web.http: client certificate needs both a certificate file and a key file (got "/vitals-test/c.pem" and "")`+"\n"+
			worse+`:17:11: hooks[1].exec: no command: give the command and its arguments as a list`+"\n")
	empty := writeConfig(t, "checks:\n  cache: {exec: {command: [\"\"]}}\n")
	vitalsRun(t, "validate", "--offline", "-c", empty).expect(t, 2, "",
		empty+`:2:17: checks.cache.exec: the command's name (its first word) is empty`+"\n")
}

// -c - reads the file from stdin, which errors call stdin, as vitals import
// does; a bad file from stdin is exit 2 with every error, and starts
// nothing.
func TestAFileOnStdinIsReadAndNamedStdin(t *testing.T) {
	good := "checks:\n  up: {heartbeat: {ttl: 1m}}\n"
	vitalsRunWithStdin(t, good, "validate", "-c", "-").expect(t, 0, "ok: stdin: 1 checks\n", "")
	vitalsRunWithStdin(t, good, "validate", "-c", "-", "--print").expect(t, 0, "  up:\n    level: ready\n    heartbeat: {ttl: 1m}\n", "")

	bad := "checks:\n  up: {heartbeat: {ttl: 1m}, level: liveness}\n  db: {tcp: {address: localhost}}\n"
	want := `stdin:2:37: checks.up.level: unknown level "liveness" (want startup, live or ready)` + "\n" +
		`stdin:3:13: checks.db.tcp: address "localhost": missing port in address` + "\n"
	for _, args := range [][]string{{"validate", "-c", "-"}, {"validate", "--offline", "-c", "-"}, {"run", "-c", "-"}} {
		r := vitalsRunWithStdin(t, bad, args...)
		if r.code != 2 || r.stderr != want || r.stdout != "" {
			t.Errorf("vitals %v with a bad file on stdin: exit %d\nstdout: %q\nstderr: %q\nwant exit 2 and stderr %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
	vitalsRunWithStdin(t, "checks: [\n", "validate", "-c", "-").expect(t, 2, "", "stdin:1:")
}

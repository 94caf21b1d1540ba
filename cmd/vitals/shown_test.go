package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
)

// What vitals prints of a secret: never the secret, whatever the output.
func noSecret(t *testing.T, r run, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(r.stdout, s) || strings.Contains(r.stderr, s) {
			t.Fatalf("%q shows:\nstdout: %s\nstderr: %s", s, r.stdout, r.stderr)
		}
	}
}

func TestProbeAndWaitHideTheSecretsOfTheirTargetsAndOfTheEnvironment(t *testing.T) {
	// A command vitals runs inherits its environment, and may print it: the
	// kubelet copies an exec probe's output into the pod's Events.
	t.Setenv("DB_PASSWORD", "s3cretpw")
	closed := closedPort(t)
	url := "http://" + closed + "/?password=hunter22&token=abcd1234"
	shownURL := "GET http://" + closed + "/?password=xxxxx&token=xxxxx"
	r := vitalsRun(t, "probe", url)
	r.expect(t, 1, "", shownURL+": dial tcp "+closed+": connect: connection refused\n")
	noSecret(t, r, "hunter22", "abcd1234")

	r = vitalsRun(t, "probe", "-o", "json", url)
	var got struct{ Target, Output string }
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 1 || got.Target != shownURL {
		t.Fatalf("exit %d, JSON %+v (%v)\n%s", r.code, got, err, r.stdout)
	}
	noSecret(t, r, "hunter22", "abcd1234")

	script := []string{"--", "sh", "-c", `echo "login as app with $DB_PASSWORD"; exit 1`}
	r = vitalsRun(t, append([]string{"probe"}, script...)...)
	r.expect(t, 1, "", `exec sh -c "echo \"login as app with $DB_PASSWORD\"; exit 1": login as app with xxxxx`+"\n")
	noSecret(t, r, "s3cretpw")

	r = vitalsRun(t, append([]string{"probe", "-o", "json"}, script...)...)
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 1 || got.Output != "login as app with xxxxx" {
		t.Fatalf("exit %d, JSON %+v (%v)\n%s", r.code, got, err, r.stdout)
	}
	noSecret(t, r, "s3cretpw")

	r = vitalsRun(t, "probe", "-v", "--", "sh", "-c", `echo "token $DB_PASSWORD accepted"`)
	r.expect(t, 0, "ok: exec sh -c \"echo \\\"token $DB_PASSWORD accepted\\\"\": token xxxxx accepted\n", "")
	noSecret(t, r, "s3cretpw")

	// vitals wait says the same, on every line and in its JSON.
	r = vitalsRun(t, append([]string{"wait", "-v", "--timeout", "3s", url}, script...)...)
	r.expect(t, 1, "", "  "+shownURL+": dial tcp ")
	if !strings.Contains(r.stderr, "waiting: "+shownURL) || !strings.Contains(r.stderr, ": login as app with xxxxx") {
		t.Fatalf("stderr %s", r.stderr)
	}
	noSecret(t, r, "hunter22", "abcd1234", "s3cretpw")
	r = vitalsRun(t, append([]string{"wait", "-o", "json", "--timeout", "3s", url}, script...)...)
	var results []struct{ Target, Output string }
	if err := json.Unmarshal([]byte(r.stdout), &results); err != nil || len(results) != 2 ||
		results[0].Target != shownURL || results[1].Output != "login as app with xxxxx" {
		t.Fatalf("exit %d, JSON %+v (%v)\n%s", r.code, results, err, r.stdout)
	}
	noSecret(t, r, "hunter22", "abcd1234", "s3cretpw")
}

func TestRunServesAnExecChecksControlCharactersEscaped(t *testing.T) {
	addr := freeAddr(t)
	path := writeConfig(t, fmt.Sprintf(`
listen: %s
api: %s
checks:
  title:
    exec: {command: [sh, -c, 'printf "\033]0;pwned\007 \342\200\256 \000 done"; exit 1']}
    period: 100ms
    failure-threshold: 1
`, addr, filepath.Join(vitalstest.ShortDir(t), "vitals.sock")))
	cmd := exec.Command(vitals, "run", "-c", path, "--log-format", "json") // slog's JSON writes U+202E as it is
	logs := &vitalstest.Buffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := `[-]title failed: \x1b]0;pwned\a \u202e \x00 done` + "\n"
	for _, target := range []string{"/readyz?verbose", "/readyz/title", "/readyz?format=json"} {
		var body string
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if res, err := http.Get("http://" + addr + target); err == nil {
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if body = string(b); strings.Contains(body, "pwned") {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET %s: no failure within 20s: %q; logs:\n%s", target, body, logs.String())
			}
		}
		if strings.ContainsAny(body, "\x1b\x07\x00\u202e") {
			t.Fatalf("GET %s answers raw control characters: %q", target, body)
		}
		want := line
		if strings.Contains(target, "json") {
			want = `"output":"\\x1b]0;pwned\\a \\u202e \\x00 done"`
		}
		if !strings.Contains(body, want) {
			t.Fatalf("GET %s: %q, want it with %q", target, body, want)
		}
	}
	if strings.ContainsAny(logs.String(), "\x1b\x07\x00\u202e") {
		t.Fatalf("the logs have raw control characters:\n%q", logs.String())
	}
}

func TestValidateEscapesTheControlCharactersOfAKey(t *testing.T) {
	path := writeConfig(t, "checks:\n  \"db\u202egnp\x00x\":\n    tcp: {address: \"localhost\x1b]0;pwned\x07\"}\n")
	r := vitalsRun(t, "validate", "-c", path)
	r.expect(t, 2, "", path+`:2:3: checks.db\u202egnp\x00x: a check name is lower case`)
	r.expect(t, 2, "", path+`:3:10: checks.db\u202egnp\x00x.tcp: address "localhost\x1b]0;pwned\a": missing port in address`+"\n")
	if strings.ContainsAny(r.stderr, "\x1b\x07\x00\u202e") || strings.Count(r.stderr, "\n") != 2 {
		t.Fatalf("stderr %q: want two lines, with nothing raw", r.stderr)
	}
}

// An exec check inherits vitals's environment: a secret-named variable of it
// is hidden though the file never names it, as vitals probe hides it.
func TestRunHidesTheSecretsOfItsEnvironment(t *testing.T) {
	const secret = "s3cret-from-env"
	addr := freeAddr(t)
	path := writeConfig(t, fmt.Sprintf(`
listen: %s
api: %s
checks:
  leak:
    exec: {command: [sh, -c, 'echo "password is $DB_PASSWORD"; exit 1']}
    period: 100ms
    failure-threshold: 1
`, addr, filepath.Join(vitalstest.ShortDir(t), "vitals.sock")))
	_, logs := runInBackground(t, append(os.Environ(), "DB_PASSWORD="+secret), vitals, "run", "-c", path)
	var body string
	waitFor(t, "the exec check to fail", logs, func() bool {
		if res, err := http.Get("http://" + addr + "/readyz?verbose"); err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			body = string(b)
		}
		return strings.Contains(body, "password is")
	})
	if strings.Contains(body, secret) || !strings.Contains(body, "password is xxxxx") {
		t.Errorf("/readyz?verbose: %q, want the secret as xxxxx", body)
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("the logs show the secret:\n%s", logs.String())
	}
}

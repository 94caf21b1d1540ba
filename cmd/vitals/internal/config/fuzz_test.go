package config_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	. "github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/logwatch"
)

// fuzzEnv sets a few variables, so that ${VAR} both expands and fails.
func fuzzEnv(name string) (string, bool) {
	switch name {
	case "HOST":
		return "example.com", true
	case "PORT":
		return "8080", true
	case "EMPTY":
		return "", true
	case "WEIRD":
		return "${HOST}\n: [", true
	}
	return "", false
}

// lineCount is how many lines YAML sees in data: a line ends with "\r\n",
// "\n" or a lone "\r".
func lineCount(data []byte) int {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	return strings.Count(s, "\n") + strings.Count(s, "\r") + 1
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		issueExample,
		"",
		"# only a comment\n",
		"---\n",
		"checks:\n  a: {heartbeat: {ttl: 1s}}\n---\nlisten: x\n",
		"- a\n- b\n",
		"~\n",
		"hello\n",
		"checks: {}\n",
		"checks:\n",
		"checks:\n  - a\n",
		"checks:\n  a: [1, 2\n",
		"checks:\n\ta: {}\n",
		"listen: \"unterminated\nchecks: {}\n",
		"checks:\n  Web: {heartbeat: {ttl: 1s}}\n",
		"services:\n  a: {command: [a], after: [c]}\n  b: {command: [b], requires: [a]}\n  c: {command: [c], before: [b]}\n",
		"services:\n  Web: {command: [a], before: [db]}\n  db: {command: [b], restart-rules: [{action: exit, exit-codes: {operator: not-in, values: [0, 143]}}]}\n",
		"service: {command: [a], after: x}\nchecks:\n  up: {tcp: {address: x:1}, service: b, stop-timeout: 1s, startup: disabled}\n",
		"checks:\n  -web: {heartbeat: {ttl: 1s}}\n",
		"checks:\n  shutdown: {heartbeat: {ttl: 1s}}\n",
		"checks:\n  web: {level: alive, period: 250ms, timeout: 100ms, http: {url: \"http://${HOST}:${PORT}/$$x\", headers: {A: [a, b], B: c}}}\n",
		"checks:\n  web: {http: {url: \"http://${UNSET}/\"}}\n",
		"checks:\n  web: {http: {url: \"http://${HOST/\"}}\n",
		"checks:\n  web: {http: {url: \"http://${1BAD}${}/\"}}\n",
		"checks:\n  web: {http: {url: \"ftp://x\", status: \"399-200\", body: \"(\"}}\n",
		"checks:\n  web: {http: {url: \"http://x/\"}, tcp: {address: \"x:1\"}}\n",
		"checks:\n  web: {htp: {url: \"http://x/\"}}\n",
		"checks:\n  web: {level: bogus, heartbeat: {}}\n",
		"checks:\n  hb: {heartbeat: {ttl: 0}, period: 10, timeout: soon, initial-delay: -1s}\n",
		"checks:\n  db: {tcp: {address: localhost}, success-threshold: 1.5, failure-threshold: three}\n",
		"checks:\n  db: {tcp: {address: \"x:70000\"}, failure-threshold: 99999999999}\n",
		"checks:\n  cert: {tls: {address: \":443\", min-validity: -1h}}\n",
		"checks:\n  ok: {exec: {command: \"cat /etc/hosts\"}}\n",
		"checks:\n  ok: {exec: {command: [sh, -c, \"exit 0\"], env: {B: \"1\", A: [x, y]}, dir: /}}\n",
		"checks:\n  ok: {exec: {command: [vitals-no-such-command]}}\n",
		"checks:\n  f: {file: {non-empty: true, max-age: 5}}\n",
		"checks:\n  d: {dns: {name: example.com, type: a, answers: [1.2.3.4, 1.2.3.400]}}\n",
		"checks:\n  d: {dns: {name: example.com, type: SRV, server: \"x:99999\"}}\n",
		"details: \"yes\"\napi: tcp://:1\nchecks:\n  a: &x {heartbeat: {ttl: 1s}}\n  b: *x\n",
		"checks:\n  a:\n    <<: {heartbeat: {ttl: 1s}}\n",
		"checks:\n  web:\n    period:\n    tcp: {address: ~}\n",
		"checks:\n  ? [a, b]\n  : {heartbeat: {ttl: 1s}}\n",
		"checks: !!map\n  a: !!map {heartbeat: !!map {ttl: !!str 1s}}\n",
		"listen: ${WEIRD}\nchecks:\n  a: {heartbeat: {ttl: \"${PORT}ms\"}}\n",
		"checks:\n  web:\n    tcp:\n      address: |\n        x:1\n",
		"kubernetes: {events: true, condition: vitals.dev/ready}\nchecks:\n  a: {heartbeat: {ttl: 1s}}\n",
		"kubernetes: {events: 1, condition: Ready, x: y}\nchecks:\n  a: {heartbeat: {ttl: 1s}}\n",
		"kubernetes:\n  condition: \"${HOST}/${EMPTY}\"\nchecks: {}\n",
		"#\r\n0", // a comment's CRLF, once counted as two lines
	} {
		f.Add([]byte(seed))
	}
	const name = "fuzz.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(name, data, fuzzEnv, kinds.All)
		if (c == nil) == (err == nil) {
			t.Fatalf("Parse returned config %v and error %v: want exactly one", c, err)
		}
		if err == nil {
			if c.File != name {
				t.Errorf("config's File is %q, want %q", c.File, name)
			}
			// A file that loads is a file whose checks build.
			for _, ch := range c.Checks {
				checker, err := kinds.All.Build(ch, kinds.Env{Output: func(*logwatch.Check) {}})
				if ch.Name == "" || (err != nil) != (ch.Fed.Feed != 0) {
					t.Errorf("check %+v: built %v, %v", ch, checker, err)
				}
				if c, ok := checker.(io.Closer); ok {
					c.Close()
				}
			}
			return
		}
		var es Errors
		if !errors.As(err, &es) {
			t.Fatalf("error is a %T, want an Errors: %v", err, err)
		}
		if len(es) == 0 {
			t.Fatal("an empty Errors")
		}
		lines := lineCount(data)
		for i, e := range es {
			if e.Msg == "" {
				t.Errorf("error %d has no message: %#v", i, e)
			}
			if e.File != name {
				t.Errorf("error %d has File %q, want %q", i, e.File, name)
			}
			if e.Line < 0 || e.Line > lines {
				t.Errorf("error %d is on line %d of a file of %d lines: %v", i, e.Line, lines, e)
			}
			if e.Column < 0 || e.Line == 0 && e.Column != 0 {
				t.Errorf("error %d has column %d: %v", i, e.Column, e)
			}
			if i > 0 && (es[i-1].Line > e.Line || es[i-1].Line == e.Line && es[i-1].Column > e.Column) {
				t.Errorf("errors %d and %d are out of the file's order:\n%v", i-1, i, err)
			}
		}
		// The same file says the same thing twice.
		if _, again := Parse(name, data, fuzzEnv, kinds.All); again == nil || again.Error() != err.Error() {
			t.Errorf("Parse again:\n%v\nfirst:\n%v", again, err)
		}
	})
}

package config_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/apisocket"
	. "github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/jsonbody"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/logwatch"
)

// file is the name Parse is given in these tests, which every error starts with.
const file = "vitals.yaml"

// testEnv is the environment ${VAR} expands from in these tests.
var testEnv = map[string]string{
	"HOST":  "example.com",
	"PORT":  "8080",
	"EMPTY": "",
	"TOKEN": "s3cret",
}

func lookup(name string) (string, bool) {
	v, ok := testEnv[name]
	return v, ok
}

// y is a YAML file given line by line, so that the lines and columns of the
// expected errors can be counted in the test's source.
func y(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// A refusal is a file the loader refuses, with every error it must say, in
// order.
type refusal struct {
	name string
	yaml string
	want []string
}

// expectRefused parses each file of cases, and fails the test where one
// loads or is refused with other errors.
func expectRefused(t *testing.T, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.yaml)
			if err == nil {
				t.Fatalf("Parse succeeded, want\n%s", strings.Join(tc.want, "\n"))
			}
			if got, want := err.Error(), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("error\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func parse(t *testing.T, data string) (*Config, error) {
	t.Helper()
	return Parse(file, []byte(data), lookup, kinds.All)
}

// The fields of a Check wanted: list of every field in the check's wanted.
const wantFields = "amqp, component-type, connection, dns, exec, failure-threshold, file, grpc, heartbeat, http, initial-delay, level, listening, log, metric, nats, notify, on-failure, override, period, postgres, redis, service, stable-for, startup, stop-timeout, success-threshold, tcp, timeout, tls, watchdog"

const topFields = "api, api-token-file, auth, checks, details, drain, grpc-listen, history, hooks, kubernetes, listen, service, service-info, services, tls, ui"

const serviceFields = "after, backoff, before, command, dir, env, notification-fd, override, requires, restart, restart-rules, stop-signal, stop-timeout"

const httpFields = "bearer-token-file, body, ca-file, cert, follow-redirects, headers, insecure, json, key, max-duration, method, not-body, request-body, response-headers, server-name, status, url"

func TestBadConfigsSayWhatAndWhere(t *testing.T) {
	tooLong := strings.Repeat("a", 64)
	for _, tc := range []struct {
		name string
		yaml string
		want []string // every line of the error; nil: the file is good
	}{
		// YAML itself.
		{"YAML syntax: unclosed flow sequence", y(
			"checks:",
			"  a: [1, 2",
		), []string{
			`vitals.yaml:2:6: YAML: sequence end token ']' not found`,
		}},
		{"YAML syntax: tab indentation", y(
			"checks:",
			"\ta: {}",
		), []string{
			`vitals.yaml:2:1: YAML: found character '\t' that cannot start any token`, // a tab, escaped as every control character of an error is
		}},
		{"YAML syntax: unterminated quote", y(
			`listen: "unterminated`,
			"checks: {}",
		), []string{
			`vitals.yaml:1:9: YAML: could not find end character of double-quoted text`,
		}},
		{"YAML syntax: a check name given twice", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"  web:",
			"    heartbeat: {ttl: 1s}",
		), []string{
			`vitals.yaml:4:3: YAML: mapping key "web" already defined at [2:3]`,
		}},
		{"YAML syntax: a kind given twice", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    http: {url: \"http://y/\"}",
		), []string{
			`vitals.yaml:4:5: YAML: mapping key "http" already defined at [3:5]`,
		}},
		{"nesting deeper than 64 levels", y(
			"checks:",
			"  a: {heartbeat: {ttl: "+strings.Repeat("[", 100)+"}}",
		), []string{
			`vitals.yaml:2:84: YAML: nested deeper than 64 levels: a vitals.yaml needs a handful`,
		}},
		{"more than a million tokens", "checks: " + strings.Repeat("[]", 600000), []string{
			`vitals.yaml:1:1000007: YAML: more than 1000000 tokens: is it the configuration? (it is read no further)`,
		}},
		{"nesting 64 levels deep is YAML (and a wrong value)", y(
			"checks:",
			"  a: {heartbeat: {ttl: "+strings.Repeat("[", 60)+strings.Repeat("]", 60)+"}}",
		), []string{
			`vitals.yaml:2:24: checks.a.heartbeat.ttl: want a single value, got a list`,
		}},
		{"block nesting deeper than 64 levels", func() string {
			var b strings.Builder
			for i := range 70 {
				b.WriteString(strings.Repeat(" ", i) + "a:\n")
			}
			return b.String()
		}(), []string{
			`vitals.yaml:65:65: YAML: nested deeper than 64 levels: a vitals.yaml needs a handful`,
		}},
		{"a UTF-8 byte order mark before the first key (good)", "\uFEFF" + y(
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), nil},
		{"empty file", "", []string{
			`vitals.yaml: the file is empty: it needs checks:, or a service: to supervise`,
		}},
		{"only comments", y(
			"# vitals.yaml",
			"# nothing yet",
		), []string{
			`vitals.yaml: the file is empty: it needs checks:, or a service: to supervise`,
		}},
		{"two documents", y(
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
			"---",
			"listen: x",
		), []string{
			`vitals.yaml:4:7: one YAML document per file, not 2`,
		}},
		{"top level is a list", y(
			"- a",
			"- b",
		), []string{
			`vitals.yaml:1:1: want a mapping of ` + topFields + `, got a list`,
		}},
		{"top level is a string", y(
			"hello",
		), []string{
			`vitals.yaml:1:1: want a mapping of ` + topFields + `, got "hello"`,
		}},
		{"top level is null", y(
			"~",
		), []string{
			`vitals.yaml:1:1: want a mapping of ` + topFields + `, got nothing`,
		}},
		{"unknown top-level key", y(
			`listen: ":1"`,
			"lisen: x",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:2:1: lisen: unknown field "lisen" (want ` + topFields + `)`,
		}},
		{"top-level values of the wrong type", y(
			"listen: [a]",
			"api: {}",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:9: listen: want a single value, got a list`,
			`vitals.yaml:2:6: api: want a single value, got a mapping`,
		}},
		{"a TCP API without a token file", y(
			"listen: :8558",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
			"api: tcp://0.0.0.0:8559",
		), []string{
			`vitals.yaml:4:6: api: a TCP API (tcp://0.0.0.0:8559) needs api-token-file: anyone who reaches the port could stop checks`,
		}},
		{"checks missing", y(
			`listen: ":1"`,
		), []string{
			`vitals.yaml:1:7: checks: no checks: give at least one, or a service: to supervise`,
		}},
		{"checks empty", y(
			"checks: {}",
		), []string{
			`vitals.yaml:1:9: checks: no checks: give at least one, or a service: to supervise`,
		}},
		{"checks null", y(
			"checks:",
		), []string{
			`vitals.yaml:1:9: checks: want a mapping of check names to checks, got nothing`,
		}},
		{"checks a list", y(
			"checks:",
			"  - a",
		), []string{
			`vitals.yaml:2:3: checks: want a mapping of check names to checks, got a list`,
		}},
		{"checks a string", y(
			"checks: web",
		), []string{
			`vitals.yaml:1:9: checks: want a mapping of check names to checks, got "web"`,
		}},
		{"history without its file", y(
			"history: {}",
			"checks:",
			"  web:",
			"    heartbeat: {ttl: 1s}",
		), []string{
			`vitals.yaml:1:10: history: give file, where the checks' kept results are saved`,
		}},
		{"history in a directory that is not there", y(
			"history: {file: /nonexistent-dir-of-the-test/history.json}",
			"checks:",
			"  web:",
			"    heartbeat: {ttl: 1s}",
		), []string{
			`vitals.yaml:1:17: history.file: its directory: stat /nonexistent-dir-of-the-test: no such file or directory`,
		}},
		{"check name in upper case", y(
			"checks:",
			"  Web:",
			"    heartbeat: {ttl: 1s}",
		), []string{
			`vitals.yaml:2:3: checks.Web: a check name is lower case letters, digits and - _ . inside, at most 63 characters`,
		}},
		{"check name too long", y(
			"checks:",
			"  "+tooLong+":",
			"    heartbeat: {ttl: 1s}",
		), []string{
			`vitals.yaml:2:3: checks.` + tooLong + `: a check name is lower case letters, digits and - _ . inside, at most 63 characters`,
		}},
		{"check name with a leading dash", y(
			"checks:",
			"  -web:",
			"    heartbeat: {ttl: 1s}",
		), []string{
			`vitals.yaml:2:3: checks.-web: a check name is lower case letters, digits and - _ . inside, at most 63 characters`,
		}},
		{"check name reserved: shutdown and monitor", y(
			"checks:",
			"  shutdown:",
			"    http: {url: \"http://x/\"}",
			"  monitor:",
			"    heartbeat: {ttl: 1s}",
		), []string{
			`vitals.yaml:2:3: checks.shutdown: name "shutdown" is reserved for a line of the probe endpoints`,
			`vitals.yaml:4:3: checks.monitor: name "monitor" is reserved for a line of the probe endpoints`,
		}},
		{"check not a mapping", y(
			"checks:",
			"  web: null",
			`  web2: "x"`,
			"  web3: []",
		), []string{
			`vitals.yaml:2:8: checks.web: want a mapping of ` + wantFields + `, got nothing`,
			`vitals.yaml:3:9: checks.web2: want a mapping of ` + wantFields + `, got "x"`,
			`vitals.yaml:4:9: checks.web3: want a mapping of ` + wantFields + `, got a list`,
		}},
		{"unknown check field", y(
			"checks:",
			"  web:",
			"    interval: 10s",
			"    heartbeat: {ttl: 1s}",
		), []string{
			`vitals.yaml:3:5: checks.web.interval: unknown field "interval" (want ` + wantFields + `)`,
		}},
		{"misspelled kind", y(
			"checks:",
			"  web:",
			"    htp: {url: \"http://x/\"}",
		), []string{
			`vitals.yaml:3:5: checks.web.htp: unknown field "htp" (want ` + wantFields + `)`,
			`vitals.yaml:3:8: checks.web: no kind: give one of amqp, connection, dns, exec, file, grpc, heartbeat, http, listening, log, metric, nats, notify, postgres, redis, tcp, tls, watchdog`,
		}},
		{"no kind", y(
			"checks:",
			"  web:",
			"    level: live",
		), []string{
			`vitals.yaml:3:10: checks.web: no kind: give one of amqp, connection, dns, exec, file, grpc, heartbeat, http, listening, log, metric, nats, notify, postgres, redis, tcp, tls, watchdog`,
		}},
		{"two kinds", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    tcp: {address: \"x:1\"}",
		), []string{
			`vitals.yaml:4:10: checks.web.tcp: a check has one kind, and this one is http already`,
		}},
		{"three kinds", y(
			"checks:",
			"  web:",
			"    heartbeat: {ttl: 1s}",
			"    tcp: {address: \"x:1\"}",
			"    file: {path: /x}",
		), []string{
			`vitals.yaml:4:10: checks.web.tcp: a check has one kind, and this one is heartbeat already`,
			`vitals.yaml:5:11: checks.web.file: a check has one kind, and this one is heartbeat already`,
		}},
		{"kind not a mapping", y(
			"checks:",
			"  web:",
			`    http: "http://x/"`,
		), []string{
			`vitals.yaml:3:11: checks.web.http: want a mapping of ` + httpFields + `, got "http://x/"`,
		}},
		{"heartbeat not a mapping", y(
			"checks:",
			"  hb:",
			"    heartbeat: 60s",
		), []string{
			`vitals.yaml:3:16: checks.hb.heartbeat: want a mapping of ttl, got "60s"`,
		}},

		// Unknown fields inside each kind.
		{"http: unknown field", y(
			"checks:",
			"  a:",
			"    http: {url: \"http://x/\", uri: \"http://x/\"}",
		), []string{
			`vitals.yaml:3:30: checks.a.http.uri: unknown field "uri" (want ` + httpFields + `)`,
		}},
		{"tcp: unknown field", y(
			"checks:",
			"  a:",
			"    tcp: {address: \"x:1\", host: x}",
		), []string{
			`vitals.yaml:3:27: checks.a.tcp.host: unknown field "host" (want address, expect, send)`,
		}},
		{"tls: unknown field", y(
			"checks:",
			"  a:",
			"    tls: {address: \"x:443\", verify: false}",
		), []string{
			`vitals.yaml:3:29: checks.a.tls.verify: unknown field "verify" (want address, ca-file, cert, insecure, key, min-validity, server-name)`,
		}},
		{"exec: unknown field", y(
			"checks:",
			"  a:",
			"    exec: {command: [sh], shell: true}",
		), []string{
			`vitals.yaml:3:27: checks.a.exec.shell: unknown field "shell" (want command, dir, env, output)`,
		}},
		{"file: unknown field", y(
			"checks:",
			"  a:",
			"    file: {path: /x, exists: true}",
		), []string{
			`vitals.yaml:3:22: checks.a.file.exists: unknown field "exists" (want content, max-age, non-empty, path, regular)`,
		}},
		{"dns: unknown field", y(
			"checks:",
			"  a:",
			"    dns: {name: example.com, host: x}",
		), []string{
			`vitals.yaml:3:30: checks.a.dns.host: unknown field "host" (want answers, name, server, type)`,
		}},
		{"heartbeat: unknown field", y(
			"checks:",
			"  a:",
			"    heartbeat: {ttl: 1s, timeout: 1s}",
		), []string{
			`vitals.yaml:3:26: checks.a.heartbeat.timeout: unknown field "timeout" (want ttl)`,
		}},

		// Each kind's required fields and bad values.
		{"http: no url", y(
			"checks:",
			"  web:",
			"    http: {method: GET}",
		), []string{
			`vitals.yaml:3:11: checks.web.http: url is required`,
		}},
		{"http: bad scheme", y(
			"checks:",
			"  web:",
			"    http: {url: \"ftp://x/\"}",
		), []string{
			`vitals.yaml:3:11: checks.web.http: URL "ftp://x/": scheme must be http or https`,
		}},
		{"http: status range runs backwards", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\", status: \"399-200\"}",
		), []string{
			`vitals.yaml:3:11: checks.web.http: status set "399-200": range 399-200 runs backwards`,
		}},
		{"http: status not a code", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\", status: 2xx}",
		), []string{
			`vitals.yaml:3:11: checks.web.http: status set "2xx": "2xx" is not an HTTP status code (100-599)`,
		}},
		{"http: bad body regex", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\", body: \"(\"}",
		), []string{
			"vitals.yaml:3:36: checks.web.http.body: pattern \"(\": error parsing regexp: missing closing ): `(`",
		}},
		{"http: lower-case method", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\", method: get}",
		), []string{
			`vitals.yaml:3:11: checks.web.http: method "get" is not an HTTP method (methods are upper case: GET)`,
		}},
		{"http: insecure not a bool", y(
			"checks:",
			"  web:",
			"    http: {url: \"https://x/\", insecure: maybe}",
		), []string{
			`vitals.yaml:3:41: checks.web.http.insecure: want true or false, got "maybe"`,
		}},
		{"http: headers a string", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\", headers: \"X: y\"}",
		), []string{
			`vitals.yaml:3:39: checks.web.http.headers: want a mapping of names to values, got "X: y"`,
		}},
		{"http: header name not a token", y(
			"checks:",
			"  web:",
			"    http:",
			"      url: \"http://x/\"",
			"      headers: {\"bad name\": d}",
		), []string{
			`vitals.yaml:5:17: checks.web.http.headers.bad name: "bad name" is not a header name`,
		}},
		{"http: header value with a line break", y(
			"checks:",
			"  web:",
			"    http:",
			"      url: \"http://x/\"",
			"      headers: {X-A: \"a\\r\\nX-B: b\"}",
		), []string{
			`vitals.yaml:5:22: checks.web.http.headers.X-A: the value has a line break or a NUL, which a header cannot carry`,
		}},
		{"http: what an answer must be, each error at its field", y(
			"checks:",
			"  web:",
			"    http:",
			"      url: \"http://x/\"",
			"      follow-redirects: no",
			"      not-body: \"[z-a]\"",
			"      response-headers: {\"Location:\": /, Content-Type: \"(json\", X-Id: []}",
			"      json:",
			"        status: UP",
			"        $[: UP",
			"        $.status: \"(UP\"",
			"        $.ok: true",
		), []string{
			`vitals.yaml:5:25: checks.web.http.follow-redirects: want true or false, got "no"`,
			"vitals.yaml:6:17: checks.web.http.not-body: pattern \"[z-a]\": error parsing regexp: invalid character class range: `z-a`",
			`vitals.yaml:7:26: checks.web.http.response-headers.Location:: "Location:" is not a header name`,
			"vitals.yaml:7:56: checks.web.http.response-headers.Content-Type: pattern \"(json\": error parsing regexp: missing closing ): `(json`",
			`vitals.yaml:7:71: checks.web.http.response-headers.X-Id: no pattern: "" for any value`,
			`vitals.yaml:9:9: checks.web.http.json.status: "status" is not a JSONPath query: one starts with $, the whole body, as in $.status`,
			`vitals.yaml:10:9: checks.web.http.json.$[: "$[" is not a JSONPath query (RFC 9535): jsonpath: unexpected eof at position 3`,
			"vitals.yaml:11:19: checks.web.http.json.$.status: pattern \"(UP\": error parsing regexp: missing closing ): `(UP`",
		}},
		{"http: json not a mapping", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\", json: \"$.status=UP\"}",
		), []string{
			`vitals.yaml:3:36: checks.web.http.json: want a mapping of JSONPath queries to patterns, such as {$.status: UP}, got "$.status=UP"`,
		}},
		{"http: json with method HEAD", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\", method: HEAD, json: {$.status: UP}}",
		), []string{
			`vitals.yaml:3:11: checks.web.http: json with method HEAD: a HEAD answer has no body to judge`,
		}},
		{"tcp: no address", y(
			"checks:",
			"  db:",
			"    tcp: {send: PING}",
		), []string{
			`vitals.yaml:3:10: checks.db.tcp: address is required (host:port)`,
		}},
		{"tcp: missing port", y(
			"checks:",
			"  db:",
			"    tcp: {address: localhost}",
		), []string{
			`vitals.yaml:3:10: checks.db.tcp: address "localhost": missing port in address`,
		}},
		{"tcp: bad port", y(
			"checks:",
			"  db:",
			"    tcp: {address: \"localhost:70000\"}",
		), []string{
			`vitals.yaml:3:10: checks.db.tcp: address "localhost:70000": port "70000" is not a number from 1 to 65535`,
		}},
		{"tls: negative min-validity", y(
			"checks:",
			"  cert:",
			"    tls: {address: \"x:443\", min-validity: -1h}",
		), []string{
			`vitals.yaml:3:43: checks.cert.tls.min-validity: -1h0m0s is negative`,
		}},
		{"tls: no host to verify", y(
			"checks:",
			"  cert:",
			"    tls: {address: \":443\"}",
		), []string{
			`vitals.yaml:3:10: checks.cert.tls: address ":443" has no host to verify the certificate against: set a server name`,
		}},
		{"exec: command as a string", y(
			"checks:",
			"  ok:",
			"    exec: {command: \"cat /etc/hosts\"}",
		), []string{
			`vitals.yaml:3:21: checks.ok.exec.command: want a list of words, such as [cat, /etc/hosts], not "cat /etc/hosts": no shell splits it (for a shell, [sh, -c, "…"])`,
		}},
		{"exec: empty command", y(
			"checks:",
			"  ok:",
			"    exec: {command: []}",
		), []string{
			`vitals.yaml:3:11: checks.ok.exec: command is required`,
		}},
		{"exec: empty command name", y(
			"checks:",
			"  ok:",
			"    exec: {command: [\"\"]}",
		), []string{
			`vitals.yaml:3:11: checks.ok.exec: the command's name (its first word) is empty`,
		}},
		{"exec: command not in $PATH", y(
			"checks:",
			"  ok:",
			"    exec: {command: [vitals-no-such-command, -x]}",
		), []string{
			`vitals.yaml:3:11: checks.ok.exec: command "vitals-no-such-command" not found in $PATH`,
		}},
		{"exec: env a list", y(
			"checks:",
			"  ok:",
			"    exec: {command: [sh], env: [A=1]}",
		), []string{
			`vitals.yaml:3:32: checks.ok.exec.env: want a mapping of names to values, got a list`,
		}},
		{"exec: dir does not exist", y(
			"checks:",
			"  ok:",
			"    exec: {command: [sh], dir: /vitals-no-such-dir}",
		), []string{
			`vitals.yaml:3:11: checks.ok.exec: dir "/vitals-no-such-dir" does not exist`,
		}},
		{"file: no path", y(
			"checks:",
			"  f:",
			"    file: {non-empty: true}",
		), []string{
			`vitals.yaml:3:11: checks.f.file: path is required`,
		}},
		{"file: max-age without a unit", y(
			"checks:",
			"  f:",
			"    file: {path: /x, max-age: 5}",
		), []string{
			`vitals.yaml:3:31: checks.f.file.max-age: "5" has no unit: write 5s (or ms, m, h)`,
		}},
		{"dns: no name", y(
			"checks:",
			"  d:",
			"    dns: {}",
		), []string{
			`vitals.yaml:3:10: checks.d.dns: name is required`,
		}},
		{"dns: bad type", y(
			"checks:",
			"  d:",
			"    dns: {name: example.com, type: SRV}",
		), []string{
			`vitals.yaml:3:10: checks.d.dns: type "SRV" is not one of A, AAAA, CNAME, MX, TXT, NS`,
		}},
		{"dns: bad answer address", y(
			"checks:",
			"  d:",
			"    dns: {name: example.com, type: a, answers: [1.2.3.4, 1.2.3.400]}",
		), []string{
			`vitals.yaml:3:10: checks.d.dns: expected answer "1.2.3.400" is not an IP address`,
		}},
		{"dns: an IPv6 answer for type A", y(
			"checks:",
			"  d:",
			"    dns: {name: example.com, type: A, answers: \"::1\"}",
		), []string{
			`vitals.yaml:3:10: checks.d.dns: expected answer "::1" is not an IPv4 address, so never an A record`,
		}},
		{"heartbeat: no ttl", y(
			"checks:",
			"  hb:",
			"    heartbeat: {}",
		), []string{
			`vitals.yaml:3:16: checks.hb.heartbeat.ttl: required, and more than 0`,
		}},
		{"heartbeat: ttl 0", y(
			"checks:",
			"  hb:",
			"    heartbeat: {ttl: 0}",
		), []string{
			`vitals.yaml:3:16: checks.hb.heartbeat.ttl: required, and more than 0`,
		}},
		{"heartbeat: negative ttl", y(
			"checks:",
			"  hb:",
			"    heartbeat: {ttl: -1s}",
		), []string{
			`vitals.yaml:3:22: checks.hb.heartbeat.ttl: -1s is negative`,
		}},
		{"heartbeat: timing fields, each at its key", y(
			"checks:",
			"  hb:",
			"    heartbeat: {ttl: 1m}",
			"    period: 5s",
			"    timeout: 1s",
			"    initial-delay: 2s",
			"    failure-threshold: 2",
		), []string{
			`vitals.yaml:4:13: checks.hb.period: does not apply to a heartbeat: its ttl decides, the moment it passes`,
			`vitals.yaml:5:14: checks.hb.timeout: does not apply to a heartbeat: its ttl decides, the moment it passes`,
			`vitals.yaml:6:20: checks.hb.initial-delay: does not apply to a heartbeat: its ttl decides, the moment it passes`,
			`vitals.yaml:7:24: checks.hb.failure-threshold: does not apply to a heartbeat: its ttl decides, the moment it passes`,
		}},
		{"heartbeat: a bad timing value is said once", y(
			"checks:",
			"  hb:",
			"    heartbeat: {ttl: 1m}",
			"    period: soon",
		), []string{
			`vitals.yaml:4:13: checks.hb.period: "soon" is not a duration such as 10s, 500ms or 1m30s`,
		}},
		{"heartbeat: no ttl and a bad level, both reported", y(
			"checks:",
			"  hb:",
			"    level: bogus",
			"    heartbeat: {}",
		), []string{
			`vitals.yaml:3:12: checks.hb.level: unknown level "bogus" (want startup, live or ready)`,
			`vitals.yaml:4:16: checks.hb.heartbeat.ttl: required, and more than 0`,
		}},

		// Levels, durations, thresholds.
		{"bad level, at the level", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    level: bogus",
		), []string{
			`vitals.yaml:4:12: checks.web.level: unknown level "bogus" (want startup, live or ready)`,
		}},
		{"level in upper case", y(
			"checks:",
			"  web:",
			"    level: Live",
			"    heartbeat: {ttl: 1s}",
		), []string{
			`vitals.yaml:3:12: checks.web.level: unknown level "Live" (want startup, live or ready)`,
		}},
		{"duration without a unit", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    period: 10",
		), []string{
			`vitals.yaml:4:13: checks.web.period: "10" has no unit: write 10s (or ms, m, h)`,
		}},
		{"duration without a unit, a fraction", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    timeout: 1.5",
		), []string{
			`vitals.yaml:4:14: checks.web.timeout: "1.5" has no unit: write 1.5s (or ms, m, h)`,
		}},
		{"duration garbage", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    timeout: soon",
		), []string{
			`vitals.yaml:4:14: checks.web.timeout: "soon" is not a duration such as 10s, 500ms or 1m30s`,
		}},
		{"duration negative", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    initial-delay: -5s",
		), []string{
			`vitals.yaml:4:20: checks.web.initial-delay: -5s is negative`,
		}},
		{"stable-for negative", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    stable-for: -30s",
		), []string{
			`vitals.yaml:4:17: checks.web.stable-for: -30s is negative`,
		}},
		{"stable-for without a unit", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    stable-for: 30",
		), []string{
			`vitals.yaml:4:17: checks.web.stable-for: "30" has no unit: write 30s (or ms, m, h)`,
		}},
		{"stable-for a list", y(
			"checks:",
			"  hb:",
			"    heartbeat: {ttl: 1s}",
			"    stable-for: [30s]",
		), []string{
			`vitals.yaml:4:17: checks.hb.stable-for: want a single value, got a list`,
		}},
		{"threshold 0", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    success-threshold: 0",
		), []string{
			`vitals.yaml:4:24: checks.web.success-threshold: 0 is not at least 1`,
		}},
		{"threshold -1", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    failure-threshold: -1",
		), []string{
			`vitals.yaml:4:24: checks.web.failure-threshold: -1 is not at least 1`,
		}},
		{"threshold 1.5", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    failure-threshold: 1.5",
		), []string{
			`vitals.yaml:4:24: checks.web.failure-threshold: want a whole number, got "1.5"`,
		}},
		{"threshold three", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    failure-threshold: three",
		), []string{
			`vitals.yaml:4:24: checks.web.failure-threshold: want a whole number, got "three"`,
		}},
		{"threshold too large", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    failure-threshold: 99999999999",
		), []string{
			`vitals.yaml:4:24: checks.web.failure-threshold: 99999999999 is too large: at most 2147483647`,
		}},
		{"timeout longer than period", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://x/\"}",
			"    period: 2s",
			"    timeout: 5s",
		), []string{
			`vitals.yaml:5:14: checks.web.timeout: timeout 5s is longer than period 2s`,
		}},
		{"timeout longer than the default period", y(
			"checks:",
			"  web:",
			"    timeout: 15s",
			"    http: {url: \"http://x/\"}",
		), []string{
			`vitals.yaml:3:14: checks.web.timeout: timeout 15s is longer than period 10s`,
		}},

		// ${VAR} expansion.
		{"${UNSET}", y(
			"checks:",
			"  db:",
			"    tcp: {address: \"${UNSET}:5432\"}",
		), []string{
			`vitals.yaml:3:20: checks.db.tcp.address: environment variable UNSET is not set`,
		}},
		{"${UNSET} in a required field says only that", y(
			"checks:",
			"  web:",
			"    http: {url: \"http://${UNSET}/\"}",
		), []string{
			`vitals.yaml:3:17: checks.web.http.url: environment variable UNSET is not set`,
		}},
		{"two unset variables in one value", y(
			"listen: \"${ADDR}:${PORT2}\"",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:9: listen: environment variable ADDR is not set`,
			`vitals.yaml:1:9: listen: environment variable PORT2 is not set`,
		}},
		{"${ without }", y(
			"checks:",
			"  db:",
			"    tcp: {address: \"${HOST:5432\"}",
		), []string{
			`vitals.yaml:3:20: checks.db.tcp.address: "${HOST:5432": ${ without a closing }`,
		}},
		{"${1BAD} and ${}", y(
			"checks:",
			"  db:",
			"    tcp: {address: \"${1BAD}:${}\"}",
		), []string{
			`vitals.yaml:3:20: checks.db.tcp.address: "${1BAD}:${}": ${1BAD} is not a variable name`,
			`vitals.yaml:3:20: checks.db.tcp.address: "${1BAD}:${}": ${} is not a variable name`,
		}},
		{"$$ escape is a literal $ (good)", y(
			"api: /run/$$HOME/$${UNSET}.sock",
			"checks:",
			"  db:",
			"    tcp: {address: \"${HOST}:${PORT}\"}",
		), nil},

		// The service and drain.
		{"service: unknown field", y(
			"service:",
			"  command: [app]",
			"  restrat: always",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:3:3: service.restrat: unknown field "restrat" (want ` + serviceFields + `)`,
		}},
		{"a check's on-failure is restart, exit or ignore", y(
			"checks:",
			"  a: {heartbeat: {ttl: 1s}, on-failure: reboot}",
			"  b: {heartbeat: {ttl: 1s}, on-failure: [restart]}",
		), []string{
			`vitals.yaml:2:41: checks.a.on-failure: want restart, exit or ignore, got "reboot"`,
			`vitals.yaml:3:41: checks.b.on-failure: want a single value, got a list`,
		}},
		{"a check's component type is the draft's or an absolute URI", y(
			"checks:",
			"  a: {tcp: {address: \"db:5432\"}, component-type: database}",
			"  b: {tcp: {address: \"db:5432\"}, component-type: Datastore}",
			"  c: {tcp: {address: \"db:5432\"}, component-type: /types/db}",
			"  d: {tcp: {address: \"db:5432\"}, component-type: [system]}",
		), []string{
			`vitals.yaml:2:50: checks.a.component-type: component type "database" is not component, datastore, system or an absolute URI`,
			`vitals.yaml:3:50: checks.b.component-type: component type "Datastore" is not component, datastore, system or an absolute URI`,
			`vitals.yaml:4:50: checks.c.component-type: component type "/types/db" is not component, datastore, system or an absolute URI`,
			`vitals.yaml:5:50: checks.d.component-type: want a single value, got a list`,
		}},
		{"a heartbeat's component type is component", y(
			"checks:",
			"  a: {heartbeat: {ttl: 1s}, component-type: system}",
			"  b: {heartbeat: {ttl: 1s}, component-type: component}",
		), []string{
			`vitals.yaml:2:45: checks.a.component-type: a heartbeat is beaten by the workload, one of its own loops: its component type is component`,
		}},
		{"service-info: known keys, single values", y(
			"service-info:",
			"  service-id: [a, b]",
			"  release: 1.4.2",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:2:15: service-info.service-id: want a single value, got a list`,
			`vitals.yaml:3:3: service-info.release: unknown field "release" (want release-id, service-id, version)`,
		}},
		{"service-info is a mapping", y(
			"service-info: checkout",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:15: service-info: want a mapping of release-id, service-id, version, got "checkout"`,
		}},
		{"service: bad restart, signal, negative durations", y(
			"drain: -5s",
			"service:",
			"  command: [app, --peers, \"1\"]",
			"  restart: sometimes",
			"  stop-signal: SIGFOO",
			"  stop-timeout: -1s",
			"  backoff: {initial: 10, max: 30s, step: 2}",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:8: drain: -5s is negative`,
			`vitals.yaml:4:12: service.restart: want never, on-failure or always, got "sometimes"`,
			`vitals.yaml:5:16: service.stop-signal: "SIGFOO" is not a signal name such as SIGTERM, SIGINT or SIGQUIT`,
			`vitals.yaml:6:17: service.stop-timeout: -1s is negative`,
			`vitals.yaml:7:22: service.backoff.initial: "10" has no unit: write 10s (or ms, m, h)`,
			`vitals.yaml:7:36: service.backoff.step: unknown field "step" (want initial, max)`,
		}},
		{"service: empty command, env not a mapping, bad variable name", y(
			"service:",
			"  command: []",
			"  env: [A=1]",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:2:12: service.command: no command: give the command and its arguments as a list`,
			`vitals.yaml:3:8: service.env: want a mapping of variable names to values, got a list`,
		}},
		{"service: a command written as one string, which no shell splits", y(
			"service:",
			"  command: \"sleep 5\"",
		), []string{
			`vitals.yaml:2:12: service.command: want a list of words, such as [sleep, 5], not "sleep 5": no shell splits it (for a shell, [sh, -c, "…"])`,
		}},
		{"service: env name, backoff initial above max", y(
			"service:",
			"  env: {1A: x, PEERS: \"1\"}",
			"  backoff: {initial: 1m, max: 30s}",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:2:9: service.env.1A: "1A" is not a variable name`,
			`vitals.yaml:3:12: service.backoff: initial 1m0s is longer than max 30s`,
		}},
		{"service: backoff initial 0", y(
			"service:",
			"  backoff: {initial: 0s}",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:2:12: service.backoff.initial: 0s: give a delay of more than 0`,
		}},
		{"service: not a mapping", y(
			"service: app",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:10: service: want a mapping of ` + serviceFields + `, got "app"`,
		}},
		{"service: the issue's block (good)", y(
			"service:",
			"  command: [wg-entrypoint, --peers, \"1\"]",
			"  env: {PEERS: \"1\"}",
			"  dir: /app",
			"  restart: never",
			"  backoff: {initial: 500ms, max: 30s}",
			"  stop-signal: SIGTERM",
			"  stop-timeout: 10s",
			"drain: 5s",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), nil},

		// Types and YAML features.
		{`details: "yes" is not a word of details`, y(
			`details: "yes"`,
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:10: details: want all, local or none (true is all, false none), got "yes"`,
		}},
		{"details: yes unquoted is not a word of details", y(
			"details: yes",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:10: details: want all, local or none (true is all, false none), got "yes"`,
		}},
		{"YAML alias for a value", y(
			"checks:",
			"  a:",
			"    tcp: {address: &addr \"x:1\"}",
			"  b:",
			"    tcp: {address: *addr}",
		), []string{
			`vitals.yaml:5:20: checks.b.tcp.address: YAML aliases are not supported here: write the value out`,
		}},
		{"YAML alias for a check", y(
			"checks:",
			"  a: &x {heartbeat: {ttl: 1s}}",
			"  b: *x",
		), []string{
			`vitals.yaml:3:6: checks.b: want a mapping of ` + wantFields + `, got an alias`,
		}},
		{"YAML merge key", y(
			"checks:",
			"  a:",
			"    <<: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:3:5: checks.a.<<: unknown field "<<" (want ` + wantFields + `)`,
			`vitals.yaml:3:7: checks.a: no kind: give one of amqp, connection, dns, exec, file, grpc, heartbeat, http, listening, log, metric, nats, notify, postgres, redis, tcp, tls, watchdog`,
		}},
		{"null values", y(
			"details: null",
			"checks:",
			"  web:",
			"    period:",
			"    tcp: {address: ~}",
		), []string{
			`vitals.yaml:1:10: details: no value: give one, or leave the field out`,
			`vitals.yaml:4:12: checks.web.period: no value: give one, or leave the field out`,
			`vitals.yaml:5:20: checks.web.tcp.address: no value: give one, or leave the field out`,
		}},

		// Addresses that validate are addresses that start.
		{"ports out of range, negative, unknown", y(
			"listen: 127.0.0.1:99999",
			"grpc-listen: \":-1\"",
			"api: tcp://127.0.0.1:no-such-service",
			"api-token-file: /etc/hostname",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:9: listen: "127.0.0.1:99999": port "99999" is not a number from 0 to 65535 (0: any free port) or a service name`,
			`vitals.yaml:2:14: grpc-listen: ":-1": port "-1" is not a number from 0 to 65535 (0: any free port) or a service name`,
			`vitals.yaml:3:6: api: "tcp://127.0.0.1:no-such-service": port "no-such-service" is not a number from 0 to 65535 (0: any free port) or a service name`,
		}},
		{"ports 0, 65535 and a service name (good)", y(
			"listen: 127.0.0.1:0",
			"grpc-listen: \":65535\"",
			"api: tcp://127.0.0.1:http",
			"api-token-file: /etc/hostname",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), nil},
		{"two servers on one port", y(
			"listen: 127.0.0.1:8558",
			"grpc-listen: 0.0.0.0:8558",
			"api: tcp://:8558",
			"api-token-file: /etc/hostname",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:2:14: grpc-listen: "0.0.0.0:8558" shares a port with listen ("127.0.0.1:8558"): give each its own port`,
			`vitals.yaml:3:6: api: "tcp://:8558" shares a port with listen ("127.0.0.1:8558"): give each its own port`,
		}},
		{"the API on the port of the default listen", y(
			"api: tcp://127.0.0.1:8558",
			"api-token-file: /etc/hostname",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:6: api: "tcp://127.0.0.1:8558" shares a port with listen (":8558"): give each its own port`,
		}},
		{"one address written two ways, and localhost", y(
			"listen: localhost:8558",
			"grpc-listen: 127.0.0.1:8558",
			"api: tcp://[0:0:0:0:0:0:0:1]:8558",
			"api-token-file: /etc/hostname",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:2:14: grpc-listen: "127.0.0.1:8558" shares a port with listen ("localhost:8558"): give each its own port`,
			`vitals.yaml:3:6: api: "tcp://[0:0:0:0:0:0:0:1]:8558" shares a port with listen ("localhost:8558"): give each its own port`,
		}},
		{"a host no resolver takes", y(
			"listen: \"127.0.0.1\\0:8558\"",
			"grpc-listen: \"my host:8559\"",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:9: listen: "127.0.0.1\x00:8558": host "127.0.0.1\x00" is not an IP address or a host name`,
			`vitals.yaml:2:14: grpc-listen: "my host:8559": host "my host" is not an IP address or a host name`,
		}},
		{"one port on two hosts, and port 0 twice (good)", y(
			"listen: 127.0.0.1:8558",
			"grpc-listen: 127.0.0.2:8558",
			"api: tcp://[::1]:0",
			"api-token-file: /etc/hostname",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), nil},
		{"an API socket path longer than sun_path", y(
			"api: /run/"+strings.Repeat("d", 80)+"/"+strings.Repeat("s", 30)+".sock",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:6: api: "/run/` + strings.Repeat("d", 80) + "/" + strings.Repeat("s", 30) + `.sock" is 121 bytes, too long for a unix socket: at most 107`,
		}},
		{"an API socket in a directory too long to bind in", y(
			"api: /run/"+strings.Repeat("d", 90)+"/v.sock",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:6: api: "/run/` + strings.Repeat("d", 90) + `/v.sock" is in a directory of 95 bytes, too long for the socket to be made there: at most 86`,
		}},

		// Names, NUL bytes, tags, floors.
		{"exec: env names are variable names, as a service's", y(
			"checks:",
			"  ok:",
			"    exec:",
			"      command: [sh]",
			"      env: {\"A=B\": x, 1A: y, OK: z}",
		), []string{
			`vitals.yaml:5:13: checks.ok.exec.env.A=B: "A=B" is not a variable name`,
			`vitals.yaml:5:23: checks.ok.exec.env.1A: "1A" is not a variable name`,
		}},
		{"a NUL byte in a path, a command, an environment", y(
			`api: "/run/v\0.sock"`,
			`api-token-file: "/t\0"`,
			"service:",
			`  command: [app, "-x\0"]`,
			`  dir: "/a\0"`,
			`  env: {A: "\0"}`,
			"checks:",
			`  f: {file: {path: "/x\0y"}}`,
			`  e: {exec: {command: ["sh\0"], dir: "/\0", env: {B: "\0"}}}`,
			`  h: {http: {url: "https://x/", ca-file: "\0", cert: "\0", key: "\0"}}`,
			`  t: {tls: {address: "x:443", ca-file: "\0"}}`,
			`  g: {grpc: {url: "grpcs://x:1", key: "\0"}}`,
			"hooks:",
			`  - {on: [check-failed], exec: ["/bin/echo\0"]}`,
		), []string{
			`vitals.yaml:1:6: api: has a NUL byte, which no path or command can hold`,
			`vitals.yaml:2:17: api-token-file: has a NUL byte, which no path or command can hold`,
			`vitals.yaml:4:18: service.command[1]: has a NUL byte, which no path or command can hold`,
			`vitals.yaml:5:8: service.dir: has a NUL byte, which no path or command can hold`,
			`vitals.yaml:6:12: service.env.A: has a NUL byte, which no environment can hold`,
			`vitals.yaml:8:20: checks.f.file.path: has a NUL byte, which no path or command can hold`,
			`vitals.yaml:9:24: checks.e.exec.command[0]: has a NUL byte, which no path or command can hold`,
			`vitals.yaml:9:38: checks.e.exec.dir: has a NUL byte, which no path or command can hold`,
			`vitals.yaml:9:54: checks.e.exec.env.B: has a NUL byte, which no environment can hold`,
			`vitals.yaml:10:42: checks.h.http.ca-file: has a NUL byte, which no path or command can hold`,
			`vitals.yaml:10:54: checks.h.http.cert: has a NUL byte, which no path or command can hold`,
			`vitals.yaml:10:65: checks.h.http.key: has a NUL byte, which no path or command can hold`,
			`vitals.yaml:11:40: checks.t.tls.ca-file: has a NUL byte, which no path or command can hold`,
			`vitals.yaml:12:39: checks.g.grpc.key: has a NUL byte, which no path or command can hold`,
			`vitals.yaml:14:33: hooks[0].exec[0]: has a NUL byte, which no path or command can hold`,
		}},
		{"YAML tags: unknown, unsupported, not fitting their value", y(
			"checks:",
			"  a: {heartbeat: {ttl: !foo 1s}}",
			"  b: {heartbeat: {ttl: !!binary MXM=}}",
			"  c: {heartbeat: {ttl: !!int 1s}}",
			"  d: {heartbeat: {ttl: 1s}, level: !!bool live}",
		), []string{
			`vitals.yaml:2:24: YAML tag !foo is not one vitals reads: leave it out (!!str, !!int, !!float, !!bool, !!null, !!map and !!seq are accepted, each on a value of its kind)`,
			`vitals.yaml:3:24: YAML tag !!binary is not one vitals reads: leave it out (!!str, !!int, !!float, !!bool, !!null, !!map and !!seq are accepted, each on a value of its kind)`,
			`vitals.yaml:3:24: checks.b.heartbeat.ttl: "MXM=" is not a duration such as 10s, 500ms or 1m30s`,
			`vitals.yaml:4:24: YAML tag !!int does not fit its value, "1s"`,
			`vitals.yaml:5:36: YAML tag !!bool does not fit its value, "live"`,
		}},
		{"YAML core tags that fit their values (good)", y(
			"details: !!bool true",
			"checks: !!map",
			"  a: !!map {heartbeat: !!map {ttl: !!str 1s}}",
			"  b: {tcp: {address: !!str \"x:1\"}, failure-threshold: !!int 3}",
		), nil},
		{"period shorter than the floor", y(
			"checks:",
			"  a: {tcp: {address: \"x:1\"}, period: 1ns}",
			"  b: {tcp: {address: \"x:1\"}, period: 9ms, timeout: 1ms}",
			"  c: {tcp: {address: \"x:1\"}, period: 10ms}",
		), []string{
			`vitals.yaml:2:38: checks.a.period: 1ns is shorter than 10ms, the shortest period: more often is a busy loop, not a check`,
			`vitals.yaml:3:38: checks.b.period: 9ms is shorter than 10ms, the shortest period: more often is a busy loop, not a check`,
		}},
		{"service: backoff max shorter than the floor", y(
			"service:",
			"  backoff: {initial: 1ns, max: 1ns}",
			"checks:",
			"  a: {heartbeat: {ttl: 1ns}}",
		), []string{
			`vitals.yaml:2:12: service.backoff.max: 1ns is shorter than 10ms: a workload that exits at once would be restarted in a busy loop`,
		}},

		// Several errors, every one, in the file's order.
		{"several errors together, in line order", y(
			`details: "maybe"`,
			"checks:",
			"  web:",
			"    http: {url: \"ftp://x/\"}",
			"    period: 10",
			"  Bad: {heartbeat: {ttl: 1s}}",
			"  db:",
			"    success-threshold: 1.5",
			"    tcp: {address: \"${NOPE}:1\", expect: [a]}",
			"    failure-threshold: 0",
			"  hb:",
			"    heartbeat: {ttl: 1s}",
			"    exec: {command: [sh]}",
			"listen: {}",
		), []string{
			`vitals.yaml:1:10: details: want all, local or none (true is all, false none), got "maybe"`,
			`vitals.yaml:4:11: checks.web.http: URL "ftp://x/": scheme must be http or https`,
			`vitals.yaml:5:13: checks.web.period: "10" has no unit: write 10s (or ms, m, h)`,
			`vitals.yaml:6:3: checks.Bad: a check name is lower case letters, digits and - _ . inside, at most 63 characters`,
			`vitals.yaml:8:24: checks.db.success-threshold: want a whole number, got "1.5"`,
			`vitals.yaml:9:20: checks.db.tcp.address: environment variable NOPE is not set`,
			`vitals.yaml:9:41: checks.db.tcp.expect: want a single value, got a list`,
			`vitals.yaml:10:24: checks.db.failure-threshold: 0 is not at least 1`,
			`vitals.yaml:13:11: checks.hb.exec: a check has one kind, and this one is heartbeat already`,
			`vitals.yaml:14:9: listen: want a single value, got a mapping`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parse(t, tc.yaml)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Parse:\n%s\nwant no error", err)
				}
				if c == nil {
					t.Fatal("Parse returned neither a config nor an error")
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse succeeded, want:\n%s", strings.Join(tc.want, "\n"))
			}
			if c != nil {
				t.Errorf("Parse returned a config with its error")
			}
			if got, want := err.Error(), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("Parse error:\n%s\nwant:\n%s", got, want)
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("error is a %T, want an Errors", err)
			}
			for _, e := range es {
				if e.File != file {
					t.Errorf("error %q has File %q, want %q", e, e.File, file)
				}
			}
		})
	}
}

// want is what a test checks of a Check: its data, and of the checker that
// the table builds from it only that it builds, and what it says it probes.
type want struct {
	Name             string
	Level            health.Level
	Kind             string
	Period           time.Duration
	Timeout          time.Duration
	InitialDelay     time.Duration
	SuccessThreshold int
	FailureThreshold int
	Fed              Fed
	Spec             any
	Target           string // the Checker's String; "" for a heartbeat, which has none
}

func got(c Check) want {
	w := want{
		Name: c.Name, Level: c.Level, Kind: c.Kind,
		Period: c.Period, Timeout: c.Timeout, InitialDelay: c.InitialDelay,
		SuccessThreshold: c.SuccessThreshold, FailureThreshold: c.FailureThreshold,
		Fed: c.Fed, Spec: c.Spec,
	}
	if s, ok := build(c).(fmt.Stringer); ok {
		w.Target = s.String()
	}
	return w
}

// build is the checker the table builds from c, for a workload's output;
// nil for a heartbeat, which runs nothing.
func build(c Check) health.Checker {
	checker, _ := kinds.All.Build(c, kinds.Env{Output: func(*logwatch.Check) {}})
	return checker
}

func checkChecks(t *testing.T, c *Config, wants ...want) {
	t.Helper()
	if len(c.Checks) != len(wants) {
		t.Fatalf("%d checks, want %d: %+v", len(c.Checks), len(wants), c.Checks)
	}
	for i, w := range wants {
		g := got(c.Checks[i])
		if !reflect.DeepEqual(g, w) {
			t.Errorf("check %d:\n got %+v\nwant %+v", i, g, w)
		}
		if checker, err := kinds.All.Build(c.Checks[i], kinds.Env{Output: func(*logwatch.Check) {}}); (err != nil) != (w.Kind == "heartbeat") {
			t.Errorf("check %s: Build gave %v, %v for a %s check", w.Name, checker, err, w.Kind)
		}
	}
}

func mustParse(t *testing.T, data string) *Config {
	t.Helper()
	c, err := parse(t, data)
	if err != nil {
		t.Fatalf("Parse:\n%s", err)
	}
	if c == nil {
		t.Fatal("Parse returned neither a config nor an error")
	}
	return c
}

// issueExample is the file of the issue, as it is written there.
const issueExample = `listen: 127.0.0.1:8558        # default :8558
api: /run/vitals/vitals.sock  # management API
details: true
checks:
  peer-config:
    level: ready              # startup | live | ready (default ready); Pebble's "alive" accepted as live
    file: {path: /config/peer1/peer1.conf, non-empty: true}
    period: 2s                # Go durations; sub-second allowed
  ui:
    level: live
    http: {url: "http://localhost:8080/", status: "200-399"}
    period: 10s
    timeout: 3s
    failure-threshold: 3
  reconciler:
    level: live
    heartbeat: {ttl: 60s}
`

func TestTheIssuesExample(t *testing.T) {
	c := mustParse(t, issueExample)
	if c.File != file || c.Listen != "127.0.0.1:8558" || c.API != "/run/vitals/vitals.sock" || c.Details != DetailsAll {
		t.Errorf("File %q, Listen %q, API %q, Details %v", c.File, c.Listen, c.API, c.Details)
	}
	// Every timing is as vitals runs it: the kubelet's defaults where the
	// file gives none.
	checkChecks(t, c,
		want{Name: "peer-config", Level: health.Ready, Kind: "file",
			Period: 2 * time.Second, Timeout: time.Second, SuccessThreshold: 1, FailureThreshold: 3,
			Spec:   probe.FileSpec{Path: "/config/peer1/peer1.conf", NonEmpty: true},
			Target: "file /config/peer1/peer1.conf"},
		want{Name: "ui", Level: health.Live, Kind: "http",
			Period: 10 * time.Second, Timeout: 3 * time.Second, SuccessThreshold: 1, FailureThreshold: 3,
			Spec:   kinds.HTTPSpec{HTTPSpec: probe.HTTPSpec{URL: "http://localhost:8080/", Status: "200-399"}},
			Target: "GET http://localhost:8080/"},
		want{Name: "reconciler", Level: health.Live, Kind: "heartbeat",
			Period: 10 * time.Second, SuccessThreshold: 1, FailureThreshold: 1,
			Fed: Fed{Feed: Beats, Deadline: time.Minute}, Spec: kinds.HeartbeatSpec{TTL: time.Minute}},
	)
	if got, want := c.Checks[1].Source, `{url: "http://localhost:8080/", status: "200-399"}`; got != want {
		t.Errorf("ui's Source is %q, want %q", got, want)
	}
}

func TestService(t *testing.T) {
	c := mustParse(t, y(
		"drain: 5s",
		"service:",
		"  command: [wg-entrypoint, --peers, \"1\"]",
		"  env: {PEERS: \"${PORT}\"}",
		"  dir: /app",
		"  restart: on-failure",
		"  backoff: {initial: 100ms}",
		"  stop-signal: QUIT",
		"  stop-timeout: 3s",
		"checks:",
		"  a: {heartbeat: {ttl: 1s}}",
	))
	want := Service{Name: "wg-entrypoint", Command: []string{"wg-entrypoint", "--peers", "1"}, Env: map[string]string{"PEERS": "8080"}, Dir: "/app",
		Restart: "on-failure", BackoffInitial: 100 * time.Millisecond, BackoffMax: 30 * time.Second,
		StopSignal: syscall.SIGQUIT, StopTimeout: 3 * time.Second}
	if len(c.Services) != 1 || !reflect.DeepEqual(c.Services[0], want) || !c.Shorthand || c.Drain != 5*time.Second {
		t.Errorf("services %+v, drain %v;\nwant %+v, drain 5s", c.Services, c.Drain, want)
	}
	c = mustParse(t, y("service: {}", "checks:", "  a: {heartbeat: {ttl: 1s}}"))
	want = Service{Restart: "never", BackoffInitial: 500 * time.Millisecond, BackoffMax: 30 * time.Second,
		StopSignal: syscall.SIGTERM, StopTimeout: 10 * time.Second}
	if len(c.Services) != 1 || !reflect.DeepEqual(c.Services[0], want) || c.Drain != 0 {
		t.Errorf("defaults: services %+v, drain %v;\nwant %+v, drain 0s", c.Services, c.Drain, want)
	}
	if c = mustParse(t, y("checks:", "  a: {heartbeat: {ttl: 1s}}")); c.Services != nil {
		t.Errorf("no service: block, services %+v", c.Services)
	}
}

// A workload's file needs no checks: vitals supervises it and serves the
// endpoints. A file with neither checks nor a service is an error (see
// TestBadConfigsSayWhatAndWhere).
func TestAServiceNeedsNoChecks(t *testing.T) {
	for _, text := range []string{y("service: {command: [app]}"), y("service: {command: [app]}", "checks: {}")} {
		if c := mustParse(t, text); len(c.Checks) != 0 || len(c.Services) != 1 || c.Services[0].Command[0] != "app" {
			t.Errorf("%q: checks %v, services %+v", text, c.Checks, c.Services)
		}
	}
}

func TestTopLevelDefaults(t *testing.T) {
	c := mustParse(t, y(
		"checks:",
		"  hb: {heartbeat: {ttl: 1s}}",
	))
	if c.Listen != DefaultListen || c.API != apisocket.Default() || c.Details != DetailsLocal || c.TLS != nil || c.Auth != (Auth{}) {
		t.Errorf("Listen %q, API %q, Details %v, TLS %v, Auth %v; want the defaults %q, %q, local, none, none",
			c.Listen, c.API, c.Details, c.TLS, c.Auth, DefaultListen, apisocket.Default())
	}
	if DefaultListen != ":8558" {
		t.Errorf("default listen %q", DefaultListen)
	}
	checkChecks(t, c, want{Name: "hb", Level: health.Ready, Kind: "heartbeat",
		Period: 10 * time.Second, SuccessThreshold: 1, FailureThreshold: 1,
		Fed: Fed{Feed: Beats, Deadline: time.Second}, Spec: kinds.HeartbeatSpec{TTL: time.Second}})

	c = mustParse(t, y(
		"details: false",
		"checks:",
		"  hb: {heartbeat: {ttl: 1s}}",
	))
	if c.Details != DetailsNone {
		t.Errorf("details: false read as %q, want none", c.Details)
	}
}

// Each check has its kind's component type unless it gives one of its own,
// which the engine takes as it is.
func TestAComponentTypeIsTheKindsUnlessTheCheckSaysOtherwise(t *testing.T) {
	c := mustParse(t, y(
		"checks:",
		"  db: {postgres: {url: \"postgres://localhost:5432/app\"}}",
		"  mq: {amqp: {url: \"amqp://localhost:5672\"}}",
		"  web: {http: {url: \"http://localhost:8080/\"}}",
		"  upstream: {http: {url: \"https://api.example.com/\"}, component-type: system}",
		"  vault: {tcp: {address: \"vault:8200\"}, component-type: \"https://schema.org/Service\"}",
		"  loop: {heartbeat: {ttl: 1s}, component-type: component}",
	))
	for i, want := range []string{"datastore", "system", "component", "system", "https://schema.org/Service", "component"} {
		ch := c.Checks[i]
		if ch.ComponentType != want || ch.Health(nil).ComponentType != want {
			t.Errorf("%s: component type %q (to the engine %q), want %q", ch.Name, ch.ComponentType, ch.Health(nil).ComponentType, want)
		}
	}
}

// The service's serviceId is the host's name unless the file gives one, or
// "" for none; a version is text as written, a number's digits kept.
func TestServiceInfo(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		yaml string
		want health.ServiceInfo
	}{
		{"", health.ServiceInfo{ServiceID: host}},
		{"service-info: {}\n", health.ServiceInfo{ServiceID: host}},
		{"service-info: {version: 1.10, release-id: 3}\n", health.ServiceInfo{ServiceID: host, Version: "1.10", ReleaseID: "3"}},
		{"service-info: {service-id: checkout, version: \"2\", release-id: \"1.4.2+${PORT}\"}\n",
			health.ServiceInfo{ServiceID: "checkout", Version: "2", ReleaseID: "1.4.2+8080"}},
		{"service-info: {service-id: \"\", version: 2.0}\n", health.ServiceInfo{Version: "2.0"}},
	} {
		c := mustParse(t, tc.yaml+"checks:\n  hb: {heartbeat: {ttl: 1s}}\n")
		if c.ServiceInfo != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.yaml, c.ServiceInfo, tc.want)
		}
	}
	// vitals run with no file has the same default.
	if got := Default().ServiceInfo; got != (health.ServiceInfo{ServiceID: host}) {
		t.Errorf("with no file: %+v, want the host's name as serviceId", got)
	}
}

// A kind whose failure is an event (a log line, a ttl passing) fails at
// the first: its checks' failure-threshold is 1 unless they give one; the
// others' is the kubelet's 3. stable-for is read for any kind, a heartbeat
// too.
func TestTheFailureThresholdIsTheKindsAndStableForAnyChecks(t *testing.T) {
	c := mustParse(t, y(
		"checks:",
		"  errors: {log: {fail-pattern: \"connection to MQ lost\"}}",
		"  errors3: {log: {fail-pattern: \"connection to MQ lost\"}, failure-threshold: 3}",
		"  web: {http: {url: \"http://localhost:8080/\"}, stable-for: 30s}",
		"  loop: {heartbeat: {ttl: 1s}, stable-for: 1m}",
	))
	for i, want := range []struct {
		failure   int
		stableFor time.Duration
	}{{1, 0}, {3, 0}, {3, 30 * time.Second}, {1, time.Minute}} {
		ch := c.Checks[i]
		h := ch.Health(nil)
		if ch.FailureThreshold != want.failure || h.FailureThreshold != want.failure || ch.StableFor != want.stableFor || h.StableFor != want.stableFor {
			t.Errorf("%s: failure threshold %d (to the engine %d), stable for %v (%v); want %d, %v",
				ch.Name, ch.FailureThreshold, h.FailureThreshold, ch.StableFor, h.StableFor, want.failure, want.stableFor)
		}
	}
}

// A heartbeat's timing, written as zero, is what it has anyway: the file
// loads, as it always did; only a timing that would change something is
// refused (TestBadConfigsSayWhatAndWhere).
func TestAHeartbeatsZeroTimingLoads(t *testing.T) {
	c, err := parse(t, y(
		"checks:",
		"  hb:",
		"    heartbeat: {ttl: 1m}",
		"    period: 0s",
		"    timeout: 0s",
		"    initial-delay: 0s",
	))
	if err != nil {
		t.Fatal(err)
	}
	if hb := c.Checks[0]; hb.Fed != (Fed{Feed: Beats, Deadline: time.Minute}) || hb.Timeout != 0 || hb.InitialDelay != 0 {
		t.Errorf("loaded as %+v", hb)
	}
}

func TestLevels(t *testing.T) {
	c := mustParse(t, y(
		"checks:",
		"  a: {level: startup, heartbeat: {ttl: 1s}}",
		"  b: {level: live, heartbeat: {ttl: 1s}}",
		"  c: {level: alive, heartbeat: {ttl: 1s}}",
		"  d: {level: ready, heartbeat: {ttl: 1s}}",
		"  e: {heartbeat: {ttl: 1s}}",
	))
	want := []health.Level{health.Startup, health.Live, health.Live, health.Ready, health.Ready}
	for i, c := range c.Checks {
		if c.Level != want[i] {
			t.Errorf("check %s: level %v, want %v", c.Name, c.Level, want[i])
		}
	}
}

func TestSubSecondTimings(t *testing.T) {
	c := mustParse(t, y(
		"checks:",
		"  fast:",
		"    tcp: {address: \"127.0.0.1:6379\"}",
		"    period: 250ms",
		"    timeout: 100ms",
		"    initial-delay: 1.5s",
		"    success-threshold: 2",
		"    failure-threshold: 5",
		"  half:",
		"    file: {path: /tmp}",
		"    period: 500ms",
	))
	checkChecks(t, c,
		want{Name: "fast", Level: health.Ready, Kind: "tcp",
			Period: 250 * time.Millisecond, Timeout: 100 * time.Millisecond, InitialDelay: 1500 * time.Millisecond,
			SuccessThreshold: 2, FailureThreshold: 5,
			Spec: probe.TCPSpec{Address: "127.0.0.1:6379"}, Target: "tcp 127.0.0.1:6379"},
		// The default timeout, 1s, is cut to a shorter period.
		want{Name: "half", Level: health.Ready, Kind: "file",
			Period: 500 * time.Millisecond, Timeout: 500 * time.Millisecond, SuccessThreshold: 1, FailureThreshold: 3,
			Spec: probe.FileSpec{Path: "/tmp"}, Target: "file /tmp"},
	)
}

func TestExpansionIntoAURL(t *testing.T) {
	c := mustParse(t, y(
		"listen: ${EMPTY}:${PORT}",
		"api: /run/$$HOME/$${HOST}.sock",
		"checks:",
		"  web:",
		"    http:",
		"      url: \"http://${HOST}:${PORT}/price$$/${TOKEN}?q=$$$${x}\"",
		"      headers: {Authorization: \"Bearer ${TOKEN}\"}",
	))
	if c.Listen != ":8080" {
		t.Errorf("Listen %q, want %q", c.Listen, ":8080")
	}
	if c.API != "/run/$HOME/${HOST}.sock" {
		t.Errorf("API %q, want %q", c.API, "/run/$HOME/${HOST}.sock")
	}
	spec, ok := c.Checks[0].Spec.(kinds.HTTPSpec)
	if !ok {
		t.Fatalf("Spec is a %T", c.Checks[0].Spec)
	}
	if want := "http://example.com:8080/price$/s3cret?q=$${x}"; spec.URL != want {
		t.Errorf("URL %q, want %q", spec.URL, want)
	}
	if got := spec.Header["Authorization"]; !reflect.DeepEqual(got, []string{"Bearer s3cret"}) {
		t.Errorf("Authorization %q", got)
	}
	// What --print shows keeps ${VAR}: a secret in the environment stays there.
	src := c.Checks[0].Source
	if !strings.Contains(src, "${TOKEN}") || strings.Contains(src, "s3cret") {
		t.Errorf("Source %q: want ${TOKEN} unexpanded", src)
	}
}

func TestHeaders(t *testing.T) {
	c := mustParse(t, y(
		"checks:",
		"  web:",
		"    http:",
		"      url: \"https://example.com/healthz\"",
		"      method: HEAD",
		"      status: \"200,204\"",
		"      headers:",
		"        X-Multi: [a, b]",
		"        X-One: c",
		"        Host: internal.example.com",
		"      server-name: api.example.com",
		"      insecure: true",
	))
	checkChecks(t, c, want{Name: "web", Level: health.Ready, Kind: "http",
		Period: 10 * time.Second, Timeout: time.Second, SuccessThreshold: 1, FailureThreshold: 3,
		Spec: kinds.HTTPSpec{HTTPSpec: probe.HTTPSpec{URL: "https://example.com/healthz", Method: "HEAD", Status: "200,204",
			Header: map[string][]string{"X-Multi": {"a", "b"}, "X-One": {"c"}, "Host": {"internal.example.com"}},
			TLS:    probe.TLSOptions{ServerName: "api.example.com", InsecureSkipVerify: true}}},
		Target: "HEAD https://example.com/healthz"})
}

func TestAnHTTPCheckSaysWhatItsAnswerMustBe(t *testing.T) {
	c := mustParse(t, y(
		"checks:",
		"  login:",
		"    http:",
		"      url: \"http://localhost:8080/login\"",
		"      method: POST",
		"      headers: {Content-Type: application/json}",
		"      request-body: '{\"user\": \"probe\"}'",
		"      follow-redirects: false",
		"      status: 302",
		"      response-headers: {Location: [\"^/home\", \"\\\\?first\"], set-cookie: \"\"}",
		"      json:",
		"        $.status: UP",
		"        $.ratio: 1.50",
		"        $.host: ${HOST}",
		"        \"$.checks[?@.name=='db'].ok\": true",
	))
	checkChecks(t, c, want{Name: "login", Level: health.Ready, Kind: "http",
		Period: 10 * time.Second, Timeout: time.Second, SuccessThreshold: 1, FailureThreshold: 3,
		Spec: kinds.HTTPSpec{HTTPSpec: probe.HTTPSpec{URL: "http://localhost:8080/login", Method: "POST", Status: "302",
			Header: map[string][]string{"Content-Type": {"application/json"}}, RequestBody: `{"user": "probe"}`,
			NoFollowRedirects: true, ResponseHeader: map[string][]string{"Location": {"^/home", `\?first`}, "set-cookie": {""}}},
			JSON: []jsonbody.Expect{{Query: "$.status", Want: "UP"}, {Query: "$.ratio", Want: "1.50"},
				{Query: "$.host", Want: "example.com"}, {Query: "$.checks[?@.name=='db'].ok", Want: "true"}}},
		Target: "POST http://localhost:8080/login"})
	c = mustParse(t, y("checks:", "  web: {http: {url: \"http://x/\", follow-redirects: true}}"))
	if c.Checks[0].Spec.(kinds.HTTPSpec).NoFollowRedirects {
		t.Errorf("follow-redirects: true reads as NoFollowRedirects")
	}
}

func TestExecEnvIsSortedKeyValue(t *testing.T) {
	c := mustParse(t, y(
		"checks:",
		"  script:",
		"    level: live",
		"    exec:",
		"      command: [sh, -c, \"test -n \\\"$ALPHA\\\"\"]",
		"      env: {ZED: \"1\", ALPHA: \"${HOST}\", MID: [x, y], EMPTY: \"\"}",
		"      dir: /",
	))
	checkChecks(t, c, want{Name: "script", Level: health.Live, Kind: "exec",
		Period: 10 * time.Second, Timeout: time.Second, SuccessThreshold: 1, FailureThreshold: 3,
		Spec: probe.ExecSpec{Command: []string{"sh", "-c", `test -n "$ALPHA"`},
			Env: []string{"ALPHA=example.com", "EMPTY=", "MID=x", "MID=y", "ZED=1"}, Dir: "/"},
		Target: `exec sh -c "test -n \"$ALPHA\""`})
}

func TestDNSAnswers(t *testing.T) {
	c := mustParse(t, y(
		"checks:",
		"  resolves:",
		"    dns:",
		"      name: example.com",
		"      type: a",
		"      answers:",
		"        - 1.2.3.4",
		"        - 5.6.7.8",
		"  one:",
		"    dns: {name: example.com, answers: \"::ffff:1.2.3.4\", server: \"127.0.0.1:5353\"}",
	))
	checkChecks(t, c,
		want{Name: "resolves", Level: health.Ready, Kind: "dns",
			Period: 10 * time.Second, Timeout: time.Second, SuccessThreshold: 1, FailureThreshold: 3,
			Spec:   probe.DNSSpec{Name: "example.com", Type: "A", Expect: []string{"1.2.3.4", "5.6.7.8"}},
			Target: "dns example.com A"},
		want{Name: "one", Level: health.Ready, Kind: "dns",
			Period: 10 * time.Second, Timeout: time.Second, SuccessThreshold: 1, FailureThreshold: 3,
			Spec:   probe.DNSSpec{Name: "example.com", Expect: []string{"::ffff:1.2.3.4"}, Server: "127.0.0.1:5353"},
			Target: "dns example.com A/AAAA @127.0.0.1:5353"},
	)
}

func TestEveryKindAndTheFilesOrder(t *testing.T) {
	name63 := strings.Repeat("z", 63)
	c := mustParse(t, y(
		"checks:",
		"  z-last.first_0: {heartbeat: {ttl: 1m30s}}",
		"  "+name63+": {tls: {address: \"example.com:443\", min-validity: 168h}}",
		"  0: {tcp: {address: \"db:5432\", send: PING, expect: PONG}}",
		"  file: {file: {path: /etc, regular: false, max-age: 1h, content: \"x+\"}}",
	))
	var names []string
	for _, c := range c.Checks {
		names = append(names, c.Name)
	}
	if want := []string{"z-last.first_0", name63, "0", "file"}; !reflect.DeepEqual(names, want) {
		t.Errorf("checks %q, want %q, the file's order", names, want)
	}
	if s, ok := c.Checks[1].Spec.(probe.TLSSpec); !ok || s.MinValidity != 7*24*time.Hour || s.Address != "example.com:443" {
		t.Errorf("tls spec %+v", c.Checks[1].Spec)
	}
	if s, ok := c.Checks[2].Spec.(probe.TCPSpec); !ok || s != (probe.TCPSpec{Address: "db:5432", Send: "PING", Expect: "PONG"}) {
		t.Errorf("tcp spec %+v", c.Checks[2].Spec)
	}
	if s, ok := c.Checks[3].Spec.(probe.FileSpec); !ok || s != (probe.FileSpec{Path: "/etc", MaxAge: time.Hour, Content: "x+"}) {
		t.Errorf("file spec %+v", c.Checks[3].Spec)
	}
	if c.Checks[0].Fed.Deadline != 90*time.Second {
		t.Errorf("heartbeat ttl %v", c.Checks[0].Fed.Deadline)
	}
}

func TestErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{File: "f.yaml", Line: 3, Column: 5, Path: "checks.mq.amqp.url", Msg: "required"}, "f.yaml:3:5: checks.mq.amqp.url: required"},
		{Error{File: "f.yaml", Line: 3, Column: 5, Msg: "YAML: oops"}, "f.yaml:3:5: YAML: oops"},
		{Error{File: "f.yaml", Path: "checks", Msg: "no checks"}, "f.yaml: checks: no checks"},
		{Error{File: "f.yaml", Msg: "the file is empty"}, "f.yaml: the file is empty"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%#v: %q, want %q", tc.e, got, tc.want)
		}
	}
	es := Errors{{File: "a", Line: 1, Column: 2, Msg: "x"}, {File: "a", Line: 2, Column: 1, Path: "p", Msg: "y"}}
	if got, want := es.Error(), "a:1:2: x\na:2:1: p: y"; got != want {
		t.Errorf("Errors: %q, want %q", got, want)
	}
}

func TestAnErrorIsOneLineWithTheFilesControlCharactersEscaped(t *testing.T) {
	// A key with a bidi override, a NUL and a line break that would forge a
	// line of its own; a value with an OSC title and a bell.
	_, err := parse(t, y(
		`checks:`,
		`  "db\u202egnp\0x\nvitals.yaml:9:9: all good":`,
		`    tcp: {address: "host\e]0;pwned\a"}`,
	))
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("want Errors, got %v", err)
	}
	key := `checks.db\u202egnp\x00x\nvitals.yaml:9:9: all good`
	want := []string{
		`vitals.yaml:2:3: ` + key + `: a check name is lower case letters, digits and - _ . inside, at most 63 characters`,
		`vitals.yaml:3:10: ` + key + `.tcp: address "host\x1b]0;pwned\a": missing port in address`,
	}
	if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Fatalf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(es) != len(want) {
		t.Fatalf("%d errors, want %d", len(es), len(want))
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vitals.yaml")
	t.Setenv("VITALS_TEST_HOST", "127.0.0.1")
	if err := os.WriteFile(path, []byte(y(
		"checks:",
		"  db: {tcp: {address: \"${VITALS_TEST_HOST}:5432\"}}",
	)), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, kinds.All, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.File != path || c.Checks[0].Spec.(probe.TCPSpec).Address != "127.0.0.1:5432" {
		t.Errorf("File %q, spec %+v", c.File, c.Checks[0].Spec)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("checks: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad, kinds.All, Options{})
	if want := bad + ":1:9: checks: no checks: give at least one, or a service: to supervise"; err == nil || err.Error() != want {
		t.Errorf("Load(bad, kinds.All): %v, want %s", err, want)
	}

	_, err = Load(filepath.Join(dir, "missing.yaml"), kinds.All, Options{})
	var es Errors
	if err == nil || errors.As(err, &es) || !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "read configuration: ") {
		t.Errorf("Load(missing, kinds.All): %v, want a read error that is not an Errors", err)
	}
}

// checksFile is a file of n checks.
func checksFile(n int) []byte {
	var b strings.Builder
	b.WriteString("checks:\n")
	for i := range n {
		fmt.Fprintf(&b, "  c%d:\n    tcp: {address: \"127.0.0.1:%d\"}\n    period: 10s\n", i, 1+i%60000)
	}
	return []byte(b.String())
}

// Loading takes time in proportion to the file: eight times the checks take
// well under sixteen times as long (the parser alone once took 27 times, and
// 22 times for a file with a tag in it, or a long mapping in a list). A ratio of the best of
// three, so that a loaded machine does not decide.
func TestLoadingIsLinearInTheChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 45,000 checks three times over")
	}
	for _, tc := range []struct {
		name string
		file func(n int) []byte
		size func(c *Config) int
	}{
		{"checks", checksFile, func(c *Config) int { return len(c.Checks) }},
		{"checks with tags", func(n int) []byte {
			tagged := bytes.ReplaceAll(checksFile(n), []byte("period: 10s"), []byte("period: !!str 10s"))
			return append([]byte("listen: !!str ':8558'\n"), tagged...)
		}, func(c *Config) int { return len(c.Checks) }},
		{"hooks, a list", func(n int) []byte {
			var b strings.Builder
			b.WriteString("checks:\n  up: {heartbeat: {ttl: 1s}}\nhooks:\n")
			for i := range n {
				fmt.Fprintf(&b, "  - on: [check-failed]\n    exec: [/bin/echo, \"%d\"]\n", i)
			}
			return []byte(b.String())
		}, func(c *Config) int { return len(c.Hooks) }},
		{"a long mapping in a list", func(n int) []byte {
			var b strings.Builder
			b.WriteString("checks:\n  up: {heartbeat: {ttl: 1s}}\nhooks:\n- on: [check-failed]\n  webhook:\n    url: http://x/\n    headers:\n")
			for i := range n {
				fmt.Fprintf(&b, "      X-H%d: %d\n", i, i)
			}
			return []byte(b.String())
		}, func(c *Config) int { return len(c.Hooks[0].Webhook.Header) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			best := func(n int) time.Duration {
				data := tc.file(n)
				var fastest time.Duration
				for range 3 {
					start := time.Now()
					c, err := Parse(file, data, lookup, kinds.All)
					took := time.Since(start)
					if err != nil || tc.size(c) != n {
						t.Fatalf("%d: %v", n, err)
					}
					if fastest == 0 || took < fastest {
						fastest = took
					}
				}
				return fastest
			}
			small, large := best(5000), best(40000)
			if ratio := float64(large) / float64(small); ratio >= 16 {
				t.Errorf("5,000 load in %v, 40,000 in %v: %.1f times as long, want under 16", small, large, ratio)
			} else {
				t.Logf("5,000 load in %v, 40,000 in %v: %.1f times as long", small, large, ratio)
			}
		})
	}
}

// Load reads a file through whatever its path names, and never past
// MaxFileSize: a device or a FIFO that never ends is an error, not a hang.
func TestLoadReadsAtMostMaxFileSize(t *testing.T) {
	dir := t.TempDir()
	good := []byte(y("checks:", "  a: {heartbeat: {ttl: 1s}}"))
	const tooLarge = ": larger than 4 MiB: is it the configuration? (it is read no further)"

	// A ConfigMap's file: a symlink to a symlink to the data.
	if err := os.MkdirAll(filepath.Join(dir, "..data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "..data", "vitals.yaml"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "vitals.yaml")
	if err := os.Symlink(filepath.Join("..data", "vitals.yaml"), link); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(link, kinds.All, Options{}); err != nil || c.File != link || len(c.Checks) != 1 {
		t.Errorf("Load(symlink, kinds.All): %v", err)
	}

	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, append(good, strings.Repeat("#", MaxFileSize)...), 0o644); err != nil {
		t.Fatal(err)
	}
	// The first byte past the bound: on the third line, after the '#'s read.
	if _, err := Load(big, kinds.All, Options{}); err == nil || err.Error() != fmt.Sprintf("%s:3:%d%s", big, MaxFileSize-len(good)+1, tooLarge) {
		t.Errorf("Load(big, kinds.All): %v, want it at 3:%d", err, MaxFileSize-len(good)+1)
	}
	exact := filepath.Join(dir, "exact.yaml")
	if err := os.WriteFile(exact, append(good, strings.Repeat("#", MaxFileSize-len(good))...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(exact, kinds.All, Options{}); err != nil {
		t.Errorf("Load(a file of MaxFileSize, kinds.All): %v", err)
	}

	if _, err := Load("/dev/zero", kinds.All, Options{}); err == nil || err.Error() != fmt.Sprintf("/dev/zero:1:%d%s", MaxFileSize+1, tooLarge) {
		t.Errorf("Load(/dev/zero, kinds.All): %v, want /dev/zero:1:%d%s", err, MaxFileSize+1, tooLarge)
	}

	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // a writer that never stops
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		line := []byte("# more\n")
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	}()
	var es Errors
	want := fmt.Sprintf("%s:%d:%d%s", fifo, MaxFileSize/7+1, MaxFileSize%7+1, tooLarge) // lines of 7 bytes
	if _, err := Load(fifo, kinds.All, Options{}); err == nil || err.Error() != want || !errors.As(err, &es) {
		t.Errorf("Load(a FIFO that never ends, kinds.All): %v, want %s", err, want)
	}
}

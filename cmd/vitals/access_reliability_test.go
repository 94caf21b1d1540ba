package main

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
)

// R6 of the reliability suite: access to a running vitals, end to end. The
// API socket is 0600; a TCP API answers 401 without the right token, which
// it compares in constant time; the probe endpoints and /metrics answer 405
// to anything but GET and HEAD; and the secrets of the file, in URLs,
// headers and the environment, are never printed, wherever vitals writes.

// runInBackground runs a command (vitals, most often) with env, its output
// kept, and stops it (hard) when the test ends.
func runInBackground(t *testing.T, env []string, name string, args ...string) (*exec.Cmd, *vitalstest.Buffer) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	logs := &vitalstest.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, logs
}

// waitFor waits (a guard only) until cond holds.
func waitFor(t *testing.T, what string, logs *vitalstest.Buffer, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s; output:\n%s", what, logs)
		}
	}
}

// socketClient is an HTTP client of the API on the unix socket sock.
func socketClient(sock string) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
}

// call makes a request and returns its status, headers and body; 0 and the
// error when there is no answer.
func call(c *http.Client, method, url string, header ...string) (int, http.Header, string) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return 0, nil, err.Error()
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, nil, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// The socket is a socket, 0600, owned by vitals's user, from the start and
// whatever the umask, in a directory vitals makes (0755) when missing, and
// goes away when vitals stops. A file that is no socket at its path is left
// alone, and vitals starts nothing; a socket another vitals answers on is
// not taken; one that a killed vitals left is replaced.
func TestTheAPISocketIsOnlyItsOwnersAndGoesAwayWithVitals(t *testing.T) {
	dir := filepath.Join(vitalstest.ShortDir(t), "run", "vitals")
	sock := filepath.Join(dir, "vitals.sock")
	config := func(listen string) string {
		return writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nchecks:\n  loop: {heartbeat: {ttl: 1h}}\n", listen, sock))
	}
	// With umask 000: were its mode left to the umask, the socket would be
	// 0777.
	start := func() (*exec.Cmd, *vitalstest.Buffer) {
		t.Helper()
		cmd, logs := runInBackground(t, os.Environ(), "sh", "-c", `umask 000 && exec "$0" "$@"`, vitals, "run", "-c", config(freeAddr(t)))
		waitFor(t, "the API socket", logs, func() bool { _, err := os.Stat(sock); return err == nil })
		return cmd, logs
	}
	first, logs := start()
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 || int(st.Uid) != os.Getuid() {
		t.Fatalf("the socket: mode %v, owner %d; want a socket, 0600, owned by %d", fi.Mode(), st.Uid, os.Getuid())
	}
	di, err := os.Stat(dir)
	if err != nil || di.Mode().Perm() != 0o755 {
		t.Fatalf("the socket's directory: %v %v; want it made, 0755", di.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the socket's directory holds %v; want the socket alone", entries)
	}
	if code, _, body := call(socketClient(sock), "GET", "http://vitals/v1/checks"); code != 200 || !strings.Contains(body, `"loop"`) {
		t.Fatalf("GET /v1/checks on the socket: %d %s", code, body)
	}

	// Another vitals on the same socket does not take it.
	second := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nchecks:\n  loop: {heartbeat: {ttl: 1h}}\n", freeAddr(t), sock))
	vitalsRun(t, "run", "-c", second).expect(t, 1, "", "something answers on "+sock+" already: is another vitals running?")
	if code, _, _ := call(socketClient(sock), "GET", "http://vitals/v1/checks"); code != 200 {
		t.Fatalf("the first vitals no longer answers on its socket: %d", code)
	}

	first.Process.Signal(syscall.SIGTERM)
	if code := exited(t, first); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, logs)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("the socket is left once vitals stopped: %v", err)
	}

	// A vitals killed leaves its socket; the next one replaces it.
	killed, _ := start()
	killed.Process.Kill()
	killed.Wait()
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("a killed vitals left no socket to test with: %v", err)
	}
	again, logs := start()
	waitFor(t, "the new vitals answering on the socket", logs, func() bool {
		code, _, _ := call(socketClient(sock), "GET", "http://vitals/v1/checks")
		return code == 200
	})
	again.Process.Signal(syscall.SIGTERM)
	exited(t, again)

	// A file that is no socket is never replaced.
	os.WriteFile(sock, []byte("notes"), 0o644)
	listen := freeAddr(t)
	vitalsRun(t, "run", "-c", config(listen)).expect(t, 1, "", sock+" exists and is not a socket")
	if b, _ := os.ReadFile(sock); string(b) != "notes" {
		t.Fatalf("the file at the socket's path now holds %q", b)
	}
	if c, err := net.Dial("tcp", listen); err == nil {
		c.Close()
		t.Fatal("the probe endpoints were served though the API could not be")
	}
}

// A TCP API answers 401, with WWW-Authenticate, to a request without the
// token, or with any other token, before it looks at the path or the
// method; with the token, it answers. The commands say which of the two it
// was; the token is never printed.
func TestATCPAPIAnswersOnlyTheRightToken(t *testing.T) {
	const secret = "api-tok-R6-5ecret"
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte(secret+"\n"), 0o600)
	apiAddr, listen := "tcp://"+freeAddr(t), freeAddr(t)
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\napi-token-file: %s\nchecks:\n  loop: {heartbeat: {ttl: 1h}}\n",
		listen, apiAddr, tokenFile))
	cmd, logs := runInBackground(t, os.Environ(), vitals, "run", "-c", path)
	base := "http://" + strings.TrimPrefix(apiAddr, "tcp://")
	c := &http.Client{Timeout: 10 * time.Second}
	waitFor(t, "the TCP API", logs, func() bool { code, _, _ := call(c, "GET", base+"/v1/checks"); return code != 0 })

	for _, tc := range []struct {
		method, path string
		header       []string
	}{
		{"GET", "/v1/checks", nil},
		{"GET", "/v1/checks", []string{"Authorization", "Bearer wrong"}},
		{"GET", "/v1/checks", []string{"Authorization", "Bearer " + secret[:len(secret)-1]}},
		{"GET", "/v1/checks", []string{"Authorization", "Bearer " + secret + "x"}},
		{"GET", "/v1/checks", []string{"Authorization", "Bearer " + strings.ToUpper(secret)}},
		{"GET", "/v1/checks", []string{"Authorization", "Basic " + secret}},
		{"GET", "/v1/checks", []string{"Authorization", secret}},
		{"GET", "/v1/checks", []string{"X-Token", secret}},
		{"POST", "/v1/checks/stop", nil},
		{"POST", "/v1/checks/loop/beat", []string{"Authorization", "Bearer wrong"}},
		{"DELETE", "/v1/checks", nil},
		{"GET", "/v1/nope", nil},
	} {
		code, h, body := call(c, tc.method, base+tc.path, tc.header...)
		if code != 401 || h.Get("WWW-Authenticate") != `Bearer realm="vitals"` || !strings.Contains(body, `"error"`) {
			t.Errorf("%s %s with %q: %d %v %s; want 401 with WWW-Authenticate", tc.method, tc.path, tc.header, code, h, body)
		}
	}
	// Nothing was done for the requests refused: loop was neither beaten nor stopped.
	code, _, body := call(c, "GET", base+"/v1/checks/loop", "Authorization", "Bearer "+secret)
	if code != 200 || !strings.Contains(body, `"status":"pending"`) || strings.Contains(body, `"stopped":true`) {
		t.Fatalf("with the token: %d %s; want loop, pending, not stopped", code, body)
	}
	if code, _, _ := call(c, "GET", base+"/v1/checks", "Authorization", "Bearer  "+secret+" "); code != 200 {
		t.Errorf("the token with spaces around it: %d, want 200", code)
	}

	noToken := slicesWithout(os.Environ(), "VITALS_API_TOKEN=")
	cli := func(env []string, args ...string) run {
		cmd := exec.Command(vitals, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Run()
		return run{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
	}
	outputs := []string{logs.String()}
	for _, tc := range []struct {
		env    []string
		args   []string
		code   int
		stderr string
	}{
		{noToken, []string{"checks", "--api", apiAddr}, 2, "this API needs a bearer token"},
		{slices.Concat(noToken, []string{"VITALS_API_TOKEN=wrong"}), []string{"checks", "--api", apiAddr}, 2, "wrong bearer token"},
		{noToken, []string{"beat", "loop", "--api", apiAddr}, 2, "this API needs a bearer token"},
		{noToken, []string{"checks", "--api", apiAddr, "--api-token-file", tokenFile}, 0, ""},
		{slices.Concat(noToken, []string{"VITALS_API_TOKEN=" + secret}), []string{"health", "--api", apiAddr}, 1, ""},
	} {
		r := cli(tc.env, tc.args...)
		r.expect(t, tc.code, "", tc.stderr)
		outputs = append(outputs, r.stdout, r.stderr)
	}
	r := vitalsRun(t, "validate", "-c", path, "--print")
	r.expect(t, 0, "api-token-file: \""+tokenFile+"\"", "")
	outputs = append(outputs, r.stdout, r.stderr)

	cmd.Process.Signal(syscall.SIGTERM)
	if code := exited(t, cmd); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, logs)
	}
	outputs = append(outputs, logs.String())
	for _, out := range outputs {
		if strings.Contains(out, secret) {
			t.Fatalf("the token is printed:\n%s", out)
		}
	}
}

// slicesWithout is env without the variables that start with prefix.
func slicesWithout(env []string, prefix string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return out
}

// The API compares the bearer token with crypto/subtle's
// ConstantTimeCompare, and nowhere with == or another comparison that ends
// at the first byte that differs: how long a refusal takes says nothing of
// how much of a guess was right. A timing test would be flaky on a loaded
// machine; the source says it for sure.
func TestTheAPITokenIsComparedInConstantTime(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, filepath.Join("internal", "api"), func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// isToken reports whether e is a token (s.token, a token variable), or
	// made from one ([]byte(s.token), strings.TrimSpace(token)).
	isToken := func(e ast.Expr) bool {
		for {
			switch x := e.(type) {
			case *ast.ParenExpr:
				e = x.X
				continue
			case *ast.CallExpr: // a conversion, []byte(s.token), or strings.TrimSpace(got)
				if len(x.Args) != 1 {
					return false
				}
				e = x.Args[0]
				continue
			case *ast.SelectorExpr:
				return x.Sel.Name == "token"
			case *ast.Ident:
				return x.Name == "token"
			}
			return false
		}
	}
	constantTime := 0
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.BinaryExpr:
					if x.Op != token.EQL && x.Op != token.NEQ {
						return true
					}
					// Whether there is a token at all may be asked.
					empty := func(e ast.Expr) bool { l, ok := e.(*ast.BasicLit); return ok && l.Value == `""` }
					if isToken(x.X) && !empty(x.Y) || isToken(x.Y) && !empty(x.X) {
						t.Errorf("%s: the token is compared with %s", fset.Position(x.Pos()), x.Op)
					}
				case *ast.CallExpr:
					sel, ok := x.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					pkgName, _ := sel.X.(*ast.Ident)
					if pkgName == nil {
						return true
					}
					fn := pkgName.Name + "." + sel.Sel.Name
					switch fn {
					case "subtle.ConstantTimeCompare":
						if len(x.Args) == 2 && (isToken(x.Args[0]) || isToken(x.Args[1])) {
							constantTime++
						}
					case "bytes.Equal", "bytes.Compare", "strings.Compare", "strings.EqualFold", "reflect.DeepEqual", "strings.HasPrefix":
						for _, arg := range x.Args {
							if isToken(arg) {
								t.Errorf("%s: the token is compared with %s", fset.Position(x.Pos()), fn)
							}
						}
					}
				}
				return true
			})
		}
	}
	if constantTime == 0 {
		t.Fatal("no subtle.ConstantTimeCompare of the request's token with the API's in internal/api")
	}
}

// POST, PUT, DELETE and PATCH on the probe endpoints, a check's own
// endpoint, /metrics and the status page answer 405 with Allow: GET, HEAD, and change
// nothing; GET and HEAD answer.
func TestTheProbeEndpointsAndMetricsAnswer405ToAnythingButGETAndHEAD(t *testing.T) {
	listen := freeAddr(t)
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nchecks:\n  loop: {level: live, heartbeat: {ttl: 1h}}\n",
		listen, filepath.Join(vitalstest.ShortDir(t), "vitals.sock")))
	cmd, logs := runInBackground(t, os.Environ(), vitals, "run", "-c", path)
	c := &http.Client{Timeout: 10 * time.Second}
	base := "http://" + listen
	waitFor(t, "the probe endpoints", logs, func() bool { code, _, _ := call(c, "GET", base+"/livez"); return code != 0 })
	for _, target := range []string{"/livez", "/readyz", "/startupz", "/healthz", "/metrics", "/livez/loop", "/readyz?verbose", "/livez?format=json",
		"/", "/ui/app.js", "/ui/api/status", "/ui/api/events"} {
		for _, method := range []string{"POST", "PUT", "DELETE", "PATCH"} {
			if code, h, body := call(c, method, base+target); code != 405 || h.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %d, Allow %q: %s; want 405 with Allow: GET, HEAD", method, target, code, h.Get("Allow"), body)
			}
		}
		for _, method := range []string{"GET", "HEAD"} {
			if code, _, body := call(c, method, base+target); code != 200 && code != 503 {
				t.Errorf("%s %s: %d %s; want an answer", method, target, code, body)
			}
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exited(t, cmd); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, logs)
	}
}

// The secrets of a file: a password in a check's URL, tokens in its query, a
// credential header from the environment and one written in the file, a
// password sent over TCP, a webhook's token header, the path and query of a
// webhook's URL, a password of the workload's environment. Every check that
// carries one fails, so that its reason is printed; vitals runs, delivers
// its hooks and stops. Not one of them shows in anything vitals writes:
// its output and logs (at debug level), the probe endpoints in every
// format, /metrics, the status page's JSON, every call of the API, every command that reads it, what
// validate --print shows, and the events the hooks received.
func TestSecretsNeverShowInAnythingVitalsPrints(t *testing.T) {
	// Every secret has this in it: a leak of any one, whole or in part
	// (escaped, cut), shows it.
	const mark = "5ecret"
	env := slices.Concat(slicesWithout(os.Environ(), "VITALS_API"), []string{
		"CHECK_TOKEN=env-tok-R6-5ecret", "REDIS_PASSWORD=redis-pw-R6-5ecret", "HOOK_TOKEN=hook-tok-R6-5ecret",
		"SVC_PASSWORD=svc-pw-R6-5ecret"})
	dir := vitalstest.ShortDir(t)
	okFile := filepath.Join(dir, "ok")
	os.WriteFile(okFile, []byte("ok"), 0o600)
	closed, listen, sock := freeAddr(t), freeAddr(t), filepath.Join(dir, "vitals.sock")
	down := server(t, 503)
	echo := echoServer(t)
	var mu sync.Mutex
	var delivered []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		delivered = append(delivered, string(b))
		mu.Unlock()
	}))
	t.Cleanup(receiver.Close)
	path := writeConfig(t, fmt.Sprintf(`listen: %s
api: %s
details: true
service:
  command: [sleep, "3600"]
  env: {API_PASSWORD: "${SVC_PASSWORD}", DB_PASSWORD: "svc-literal-R6-5ecret"}
hooks:
  - name: operator
    on: [check-failed, check-passed, level-failed, level-passed, service-started, service-exited, stopping]
    webhook: {url: "%s/hooks/hook-path-R6-5ecret?token=hook-query-R6-5ecret", headers: {Authorization: "Bearer ${HOOK_TOKEN}"}}
  - name: unreachable
    on: [check-failed]
    webhook:
      url: "http://hookuser:hook-pw-R6-5ecret@%s/services/T0/hook-path2-R6-5ecret?sig=hook-sig-R6-5ecret"
      headers: {X-Api-Key: "hook-key-R6-5ecret"}
      retries: 1
      backoff: {initial: 50ms, max: 50ms}
checks:
  boot:
    level: startup
    file: {path: %s}
  userinfo:
    level: live
    http: {url: "http://r6user:url-pw-R6-5ecret@%s/healthz"}
    period: 200ms
    failure-threshold: 1
  query:
    http: {url: "http://%s/healthz?token=query-tok-R6-5ecret&password=query-pw-R6-5ecret"}
    period: 200ms
    failure-threshold: 1
  served:
    http: {url: "http://r6user:served-pw-R6-5ecret@%s/?access_token=served-tok-R6-5ecret"}
    period: 200ms
    failure-threshold: 1
  header:
    http:
      url: "%s/"
      headers: {Authorization: "Bearer ${CHECK_TOKEN}", X-Api-Key: "literal-key-R6-5ecret"}
    period: 200ms
    failure-threshold: 1
  script:
    exec:
      command: [sh, -c, 'echo "login with $$PGPASSWORD failed" >&2; exit 1']
      env: {PGPASSWORD: "exec-literal-R6-5ecret"}
    period: 200ms
    failure-threshold: 1
  send:
    tcp: {address: %q, send: "AUTH ${REDIS_PASSWORD}\r\n", expect: "+OK"}
    period: 200ms
    failure-threshold: 1
`, listen, sock, receiver.URL, closed, okFile, closed, closed, strings.TrimPrefix(down, "http://"), down, echo))

	var outputs []string
	keep := func(what, out string) { outputs = append(outputs, what+":\n"+out) }
	cli := func(args ...string) {
		cmd := exec.Command(vitals, append(args, "--api", sock)...)
		cmd.Env = env
		out, _ := cmd.CombinedOutput()
		keep("vitals "+strings.Join(args, " "), string(out))
	}
	cmd := exec.Command(vitals, "validate", "-c", path, "--print")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("validate --print: %v\n%s", err, out)
	}
	keep("vitals validate --print", string(out))

	agent, logs := runInBackground(t, env, vitals, "run", "-c", path, "--log-level", "debug")
	api := socketClient(sock)
	waitFor(t, "every check failed with its reason, and the hooks tried", logs, func() bool {
		code, _, body := call(api, "GET", "http://vitals/v1/hooks")
		return code == 200 && strings.Count(body, `"failing":true`) == 1 &&
			strings.Count(logs.String(), "check failed") >= 6
	})
	probes := &http.Client{Timeout: 10 * time.Second}
	for _, level := range []string{"livez", "readyz", "startupz", "healthz"} {
		for _, q := range []string{"", "?verbose", "?format=json", "?verbose&format=json"} {
			_, _, body := call(probes, "GET", "http://"+listen+"/"+level+q)
			keep("/"+level+q, body)
		}
		_, _, body := call(probes, "GET", "http://"+listen+"/"+level, "Accept", "application/health+json")
		keep("/"+level+" as health+json", body)
	}
	checks := []string{"boot", "userinfo", "query", "served", "header", "script", "send"}
	for _, name := range checks {
		for _, level := range []string{"livez", "readyz", "startupz"} {
			_, _, body := call(probes, "GET", "http://"+listen+"/"+level+"/"+name)
			keep("/"+level+"/"+name, body)
		}
	}
	for _, target := range []string{"/metrics", "/ui/api/status", "/ui/api/events"} {
		_, _, body := call(probes, "GET", "http://"+listen+target)
		keep(target, body)
	}
	for _, target := range []string{"/v1/checks", "/v1/events?after=0", "/v1/hooks", "/v1/health?level=live", "/v1/health?level=ready"} {
		_, _, body := call(api, "GET", "http://vitals"+target)
		keep(target, body)
	}
	for _, name := range checks {
		_, _, body := call(api, "GET", "http://vitals/v1/checks/"+name)
		keep("/v1/checks/"+name, body)
		_, _, body = call(api, "POST", "http://vitals/v1/checks/"+name+"/run")
		keep("POST /v1/checks/"+name+"/run", body)
	}
	keep("/v1/events as a stream", eventStream(t, api))
	for _, o := range []string{"text", "wide", "json", "yaml"} {
		cli("checks", "-o", o)
	}
	for _, name := range checks {
		cli("check", name)
		cli("check", name, "--run")
	}
	for _, level := range []string{"startup", "live", "ready"} {
		cli("health", "--level", level)
	}
	cli("events")
	cli("events", "-o", "json")

	agent.Process.Signal(syscall.SIGTERM)
	if code := exited(t, agent); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit %d, want 143 (sleep's SIGTERM); output:\n%s", code, logs)
	}
	keep("vitals run", logs.String())
	mu.Lock()
	if len(delivered) == 0 {
		t.Error("the webhook received nothing")
	}
	for _, d := range delivered {
		keep("a webhook's body", d)
	}
	mu.Unlock()

	// The reasons are there, secrets hidden: the test sees what it means to.
	all := strings.Join(outputs, "\n")
	for _, want := range []string{"r6user:xxxxx@", "connection refused", "HTTP probe failed with statuscode: 503", `AUTH xxxxx`, "login with xxxxx failed", `"failing":true`} {
		if !strings.Contains(all, want) {
			t.Errorf("nothing vitals printed has %q", want)
		}
	}
	for _, out := range outputs {
		if !strings.Contains(out, mark) {
			continue
		}
		what, text, _ := strings.Cut(out, ":\n")
		var lines []string
		for line := range strings.Lines(text) {
			if strings.Contains(line, mark) {
				lines = append(lines, "  "+strings.TrimSpace(line))
			}
		}
		t.Errorf("a secret is printed in %s:\n%s", what, strings.Join(lines, "\n"))
	}
}

// echoServer answers every line it reads with the same line, and returns its
// address.
func echoServer(t *testing.T) string {
	t.Helper()
	return tcpServer(t, func(c net.Conn) {
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.Copy(c, c)
	})
}

// eventStream reads the API's event stream for a moment.
func eventStream(t *testing.T, c *http.Client) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://vitals/v1/events?after=0", nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("the event stream: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body) // until the context ends it
	if len(b) == 0 {
		t.Fatal("the event stream sent nothing")
	}
	return string(b)
}

// A stop that names one check 80,000 times (a body under the API's 1 MiB) is
// answered once for the check, not 80,000 times: an answer of a few hundred
// bytes, not of 33 MB.
func TestAStopThatRepeatsANameIsAnsweredOnceForIt(t *testing.T) {
	sock := filepath.Join(vitalstest.ShortDir(t), "vitals.sock")
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nchecks:\n  loop: {heartbeat: {ttl: 1h}}\n", freeAddr(t), sock))
	_, logs := runInBackground(t, os.Environ(), vitals, "run", "-c", path)
	waitFor(t, "the API socket", logs, func() bool { _, err := os.Stat(sock); return err == nil })
	names := strings.TrimSuffix(strings.Repeat(`"loop",`, 80000), ",")
	res, err := socketClient(sock).Post("http://vitals/v1/checks/stop", "application/json", strings.NewReader(`{"checks": [`+names+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != 200 || len(body) > 4096 || strings.Count(string(body), `"loop"`) != 1 {
		t.Fatalf("POST /v1/checks/stop with \"loop\" 80,000 times: %d, %d bytes: %.300s", res.StatusCode, len(body), body)
	}
}

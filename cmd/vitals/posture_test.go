package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/grpchealth/grpchealthtest"
	"github.com/vitals-dev/vitals/probe/probetest"
)

// R11 of the reliability suite: what each client sees of a running vitals.
// The agent runs in a network namespace of the test's own; a far client, in
// a second one joined to it by a veth pair (10.213.0.1 and 10.213.0.2, /30,
// addresses that exist in those two namespaces only), stands for another pod
// of the cluster; a client on the agent's 127.0.0.1 stands for kubectl
// port-forward. For each details: (the default, local; all; none), with TLS
// off and on, each client reads /readyz?verbose, the status page, its JSON,
// its events and its event stream, with and without the token (and, over
// TLS, with a client certificate); every client gets /metrics, the
// kubelet's kind of probe of /livez and grpc-health-probe's liveness.

// Addresses of the veth pair, in the test's namespaces only.
const (
	agentAddr = "10.213.0.1"
	farAddr   = "10.213.0.2"
)

// netnsPair makes the agent's namespace and the far one, joined by a veth
// pair with the addresses above, and removes them when the test ends.
func netnsPair(t *testing.T) (agent, far string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test makes network namespaces (ip netns add)")
	}
	for _, tool := range []string{"ip", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	agent, far = fmt.Sprintf("vitals-%d-agent", os.Getpid()), fmt.Sprintf("vitals-%d-far", os.Getpid())
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	ip("netns", "add", agent)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", agent).Run() })
	ip("netns", "add", far)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", far).Run() })
	// Made inside the namespaces: no name is ever taken in the test's own.
	ip("link", "add", "veth0", "netns", agent, "type", "veth", "peer", "name", "veth0", "netns", far)
	for ns, addr := range map[string]string{agent: agentAddr, far: farAddr} {
		ip("-n", ns, "addr", "add", addr+"/30", "dev", "veth0")
		ip("-n", ns, "link", "set", "veth0", "up")
		ip("-n", ns, "link", "set", "lo", "up")
	}
	return agent, far
}

// curlIn runs curl in the namespace ns with args and the URL, and returns
// the status code and the body; code 0 when curl could not connect or
// verify (its exit code in the body then). An event stream that stays open
// ends at curl's --max-time: its code is what its headers said.
func curlIn(t *testing.T, ns string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, "curl", "-sS", "--max-time", "2", "-o", "-", "-w", "\n%{http_code}"}, args...)...)
	out, err := cmd.Output()
	text := string(out)
	i := strings.LastIndexByte(text, '\n')
	var code int
	fmt.Sscan(text[i+1:], &code)
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 28 && code != 0: // an open stream, cut at --max-time
	case errors.As(err, &exit):
		return 0, fmt.Sprintf("curl exit %d", exit.ExitCode())
	default:
		t.Fatal(err)
	}
	return code, text[:i]
}

// viewer is one client of the agent: in which namespace, at which URL, with
// which curl options.
type viewer struct {
	name, ns, base string
	args           []string
}

// sees is what c is shown: /readyz?verbose's code and whether the reason
// is there or withheld; the page's, its JSON's, its events' and its event
// stream's codes.
func sees(t *testing.T, c viewer) string {
	t.Helper()
	get := func(path string, extra ...string) (int, string) {
		return curlIn(t, c.ns, append(append(append([]string{}, c.args...), extra...), c.base+path)...)
	}
	code, body := get("/readyz?verbose")
	reason := "?"
	switch {
	case strings.Contains(body, "[-]db failed: reason withheld"):
		reason = "withheld"
	case strings.Contains(body, "[-]db failed: stat "):
		reason = "reason"
	}
	var page []string
	for _, p := range [][]string{{"/"}, {"/ui/api/status"}, {"/ui/api/events"}, {"/ui/api/events", "-H", "Accept: text/event-stream", "--max-time", "1"}} {
		code, _ := get(p[0], p[1:]...)
		page = append(page, fmt.Sprint(code))
	}
	return fmt.Sprintf("readyz %d %s; page %s", code, reason, strings.Join(page, " "))
}

func TestEachClientSeesWhatDetailsLetsIt(t *testing.T) {
	agentNS, farNS := netnsPair(t)
	healthProbe, err := grpchealthtest.HealthProbe()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	alive, token := filepath.Join(dir, "alive"), filepath.Join(dir, "token")
	for file, text := range map[string]string{alive: "up", token: "s3cret-token\n"} {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ca := probetest.NewCA(t)
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	probetest.WriteKeyPair(t, ca.ServerFor(t, time.Hour, agentAddr, "127.0.0.1", "localhost"), certFile, keyFile)
	clientCert, clientKey := ca.Client(t)

	type want struct{ loopback, far, farToken, farCert string }
	for _, c := range []struct {
		name, file string // what the file adds to the checks
		tls        bool
		want       want
	}{
		// The defaults: nothing but the checks.
		{"defaults", "", false, want{
			loopback: "readyz 503 reason; page 200 200 200 200",
			far:      "readyz 503 withheld; page 403 403 403 403"}},
		{"details: local, auth", "details: local\nauth: {token-file: " + token + "}\n", false, want{
			loopback: "readyz 503 reason; page 200 200 200 200",
			far:      "readyz 503 withheld; page 401 401 401 401",
			farToken: "readyz 503 reason; page 200 200 200 200"}},
		{"details: all, auth", "details: all\nauth: {token-file: " + token + "}\n", false, want{
			loopback: "readyz 503 reason; page 200 200 200 200",
			far:      "readyz 503 reason; page 200 200 200 200",
			farToken: "readyz 503 reason; page 200 200 200 200"}},
		{"details: none, auth", "details: none\nauth: {token-file: " + token + "}\n", false, want{
			loopback: "readyz 503 withheld; page 200 200 200 200",
			far:      "readyz 503 withheld; page 401 401 401 401",
			farToken: "readyz 503 withheld; page 200 200 200 200"}},
		{"details: local, auth, tls", "auth: {token-file: " + token + "}\n", true, want{
			loopback: "readyz 503 reason; page 200 200 200 200",
			far:      "readyz 503 withheld; page 401 401 401 401",
			farToken: "readyz 503 reason; page 200 200 200 200",
			farCert:  "readyz 503 reason; page 200 200 200 200"}},
		{"details: all, auth, tls", "details: all\nauth: {token-file: " + token + "}\n", true, want{
			loopback: "readyz 503 reason; page 200 200 200 200",
			far:      "readyz 503 reason; page 200 200 200 200",
			farToken: "readyz 503 reason; page 200 200 200 200",
			farCert:  "readyz 503 reason; page 200 200 200 200"}},
		{"details: none, auth, tls", "details: none\nauth: {token-file: " + token + "}\n", true, want{
			loopback: "readyz 503 withheld; page 200 200 200 200",
			far:      "readyz 503 withheld; page 401 401 401 401",
			farToken: "readyz 503 withheld; page 200 200 200 200",
			farCert:  "readyz 503 withheld; page 200 200 200 200"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := c.file
			scheme := "http"
			if c.tls {
				scheme = "https"
				file += fmt.Sprintf("tls: {cert-file: %s, key-file: %s, client-ca-file: %s}\n", certFile, keyFile, ca.File)
			}
			// listen: is the default, :8558, in the agent's namespace.
			path := writeConfig(t, file+fmt.Sprintf(`api: %s
grpc-listen: ":8559"
checks:
  alive: {level: live, file: {path: %s}, period: 200ms}
  db: {file: {path: %s}, period: 200ms, failure-threshold: 1}
`, filepath.Join(t.TempDir(), "vitals.sock"), alive, filepath.Join(dir, "db-marker")))
			_, logs := runInBackground(t, nil, "ip", "netns", "exec", agentNS, vitals, "run", "-c", path)
			verify := []string{"--cacert", ca.File}
			loopback := viewer{"loopback", agentNS, scheme + "://127.0.0.1:8558", verify}
			far := viewer{"far", farNS, scheme + "://" + agentAddr + ":8558", verify}
			waitFor(t, "the db check to fail", logs, func() bool {
				code, body := curlIn(t, agentNS, append(verify, loopback.base+"/readyz?verbose")...)
				return code == 503 && strings.Contains(body, "[-]db failed")
			})

			type seen struct {
				c    viewer
				want string
			}
			clients := []seen{{loopback, c.want.loopback}, {far, c.want.far}}
			if c.want.farToken != "" {
				withToken := far
				withToken.name, withToken.args = "far, token", append(verify, "-H", "Authorization: Bearer s3cret-token")
				clients = append(clients, seen{withToken, c.want.farToken})
			}
			if c.want.farCert != "" {
				withCert := far
				withCert.name, withCert.args = "far, client certificate", append(verify, "--cert", clientCert, "--key", clientKey)
				clients = append(clients, seen{withCert, c.want.farCert})
			}
			for _, cl := range clients {
				got := sees(t, cl.c)
				t.Logf("| %s | %s | %s |", c.name, cl.c.name, got)
				if got != cl.want {
					t.Errorf("%s sees %q, want %q", cl.c.name, got, cl.want)
				}
			}

			// Every client: /metrics, the kubelet's probe (which, over
			// HTTPS, checks no certificate) and grpc-health-probe.
			if code, _ := curlIn(t, farNS, append(verify, far.base+"/metrics")...); code != 200 {
				t.Errorf("far /metrics: %d, want 200", code)
			}
			if code, body := curlIn(t, farNS, "-k", "-H", "User-Agent: kube-probe/1.33", "-H", "Accept: */*", far.base+"/livez"); code != 200 || body != "ok" {
				t.Errorf("the kubelet's probe of /livez from far: %d %q, want 200 ok", code, body)
			}
			for service, want := range map[string]int{"liveness": 0, "readiness": 4} {
				err := exec.Command("ip", "netns", "exec", farNS, healthProbe, "-addr="+agentAddr+":8559", "-service="+service,
					"-connect-timeout=2s", "-rpc-timeout=2s").Run()
				code := 0
				var exit *exec.ExitError
				if errors.As(err, &exit) {
					code = exit.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != want {
					t.Errorf("grpc-health-probe -service=%s from far: exit %d, want %d", service, code, want)
				}
			}
			if !c.tls {
				return
			}
			// cert-manager renews the certificate, from another CA: the
			// next connection is served the new one.
			renewed := probetest.NewCA(t)
			probetest.WriteKeyPair(t, renewed.ServerFor(t, time.Hour, agentAddr, "127.0.0.1"), certFile, keyFile)
			if code, _ := curlIn(t, farNS, "--cacert", renewed.File, far.base+"/livez"); code != 200 {
				t.Errorf("after the renewal, with the new CA: %d, want 200; logs:\n%s", code, logs)
			}
			if code, body := curlIn(t, farNS, "--cacert", ca.File, far.base+"/livez"); code != 0 {
				t.Errorf("after the renewal, with the old CA: %d %q, want no connection", code, body)
			}
			probetest.WriteKeyPair(t, ca.ServerFor(t, time.Hour, agentAddr, "127.0.0.1", "localhost"), certFile, keyFile)
		})
	}
}

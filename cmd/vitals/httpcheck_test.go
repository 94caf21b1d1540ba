//go:build !vitals_probe

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/kubeenv"
)

// Spring Boot's /actuator/health as Spring Boot 3 answers it with
// management.endpoint.health.show-components=always and the Kubernetes
// probe groups on: 200 while UP, 503 once a component is DOWN.
const (
	springContentType = "application/vnd.spring-boot.actuator.v3+json"
	springUp          = `{"status":"UP","components":{"db":{"status":"UP"},"diskSpace":{"status":"UP"},` +
		`"livenessState":{"status":"UP"},"ping":{"status":"UP"},"readinessState":{"status":"UP"}},"groups":["liveness","readiness"]}`
	springDown = `{"status":"DOWN","components":{"db":{"status":"DOWN"},"diskSpace":{"status":"UP"},` +
		`"livenessState":{"status":"UP"},"ping":{"status":"UP"},"readinessState":{"status":"UP"}},"groups":["liveness","readiness"]}`
	// springNoDB is the answer of the same service started without its
	// datasource: UP, as it has nothing that is down.
	springNoDB = `{"status":"UP","components":{"diskSpace":{"status":"UP"},"ping":{"status":"UP"}}}`
)

// springBoot serves /actuator/health as Spring Boot does, with body, and
// returns its URL.
func springBoot(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/actuator/health" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", springContentType)
		if strings.HasPrefix(body, `{"status":"DOWN"`) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestProbeSaysWhatAnHTTPAnswerMustBe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/app":
			http.Redirect(w, r, "/login?next=/app", http.StatusFound)
		case "/login":
			io.WriteString(w, "the login form")
		case "/graphql":
			body, _ := io.ReadAll(r.Body)
			if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(body), "__typename") {
				http.Error(w, "want a POST of a JSON query", http.StatusBadRequest)
				return
			}
			io.WriteString(w, `{"data":{"__typename":"Query"}}`)
		}
	}))
	t.Cleanup(srv.Close)
	up, noDB := springBoot(t, springUp), springBoot(t, springNoDB)
	query := []string{"--method", "POST", "--header", "Content-Type: application/json", "--request-body", `{"query":"{ __typename }"}`}
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		// A same-host redirect is followed, as the kubelet does: the 302
		// is never the answer...
		{[]string{srv.URL + "/app"}, 0, ""},
		{[]string{srv.URL + "/app", "--status", "302"}, 1, "HTTP probe failed with statuscode: 200\n"},
		// ...unless it is not to be followed.
		{[]string{srv.URL + "/app", "--no-follow-redirects", "--status", "302", "--response-header", `Location: ^/login\?next=`}, 0, ""},
		{[]string{srv.URL + "/app", "--no-follow-redirects", "--response-header", "Location: ^/sso", "--response-header", "X-Request-Id:"}, 1,
			`GET ` + srv.URL + `/app: HTTP 302: header Location does not match "^/sso"; header X-Request-Id is missing` + "\n"},
		{append([]string{srv.URL + "/graphql", "--json", "$.data.__typename=Query"}, query...), 0, ""},
		{[]string{srv.URL + "/graphql", "--method", "POST"}, 1, "HTTP probe failed with statuscode: 400\n"},
		{[]string{up + "/actuator/health", "--json", "$.status=UP", "--json", "$.components.db.status=UP"}, 0, ""},
		{[]string{noDB + "/actuator/health", "--json", "$.status=UP", "--json", "$.components.db.status=UP"}, 1,
			"HTTP 200: $.components.db.status selects no value\n"},
		{[]string{up + "/actuator/health", "--json", "$.components[?@.status!='UP']=.*"}, 1, `selects no value`},
		{[]string{up + "/actuator/health", "--json", "$.components.*.status=UP", "--response-header", "Content-Type: json$"}, 0, ""},
	}
	for _, binary := range []string{vitals, vitalsProbe} { // the probe build judges answers alike
		for _, tt := range tests {
			binaryRun(t, binary, append([]string{"probe"}, tt.args...)...).expect(t, tt.code, "", tt.stderr)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--json", "status=UP"}, `--json "status=UP": want QUERY=PATTERN, the query a JSONPath query such as $.status (--json '$.status=UP')`},
		{[]string{"--json", "$.status=(UP"}, "$.status: pattern \"(UP\": error parsing regexp: missing closing ): `(UP`"},
		{[]string{"--response-header", "Location"}, `--response-header "Location": want "Name: regular expression"`},
		{[]string{"--response-header", "Location: ("}, `response header Location pattern "(": error parsing regexp`},
		{[]string{"--method", "HEAD", "--json", "$.status=UP"}, "json with method HEAD: a HEAD answer has no body to judge"},
	} {
		r := vitalsRun(t, append([]string{"probe", srv.URL}, tt.args...)...)
		r.expect(t, 2, "", tt.want)
	}
}

// docsHTTPExamples are the checks of the http examples of docs/agent.md,
// found by the URL path each probes: the first vitals.yaml of the page that
// probes it.
func docsHTTPExamples(t *testing.T, paths ...string) map[string]config.Check {
	t.Helper()
	page := filepath.Join("docs", "agent.md")
	_, blocks, err := readPage(t, page)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]config.Check{}
	for _, b := range blocks {
		what, err := classify(b)
		if err != nil || what != vitalsYAML {
			continue
		}
		env := func(v string) (string, bool) { s, ok := docsEnvironment[v]; return s, ok }
		c, err := config.Parse(page, []byte(b.text), env, kinds.All)
		if err != nil {
			continue // TestEveryVitalsYAMLOfTheDocsValidates says why
		}
		for _, ch := range c.Checks {
			spec, ok := ch.Spec.(kinds.HTTPSpec)
			if !ok {
				continue
			}
			u, err := url.Parse(spec.URL)
			if err != nil {
				t.Fatal(err)
			}
			if _, seen := found[u.Path]; !seen {
				found[u.Path] = ch
			}
		}
	}
	for _, p := range paths {
		if _, ok := found[p]; !ok {
			t.Fatalf("%s has no vitals.yaml with an http check of %s", page, p)
		}
	}
	return found
}

// runAgainst runs the check of a doc's example once against the server at
// base (scheme://host:port), in place of the host the example names, as the
// agent builds and runs it.
func runAgainst(t *testing.T, ch config.Check, base string) health.Result {
	t.Helper()
	spec := ch.Spec.(kinds.HTTPSpec)
	u, err := url.Parse(spec.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Scheme, u.Host = b.Scheme, b.Host
	spec.URL = u.String()
	ch.Spec = spec
	checker, err := kinds.All.Build(ch, kinds.Env{})
	if err != nil {
		t.Fatalf("building %s against %s: %v", ch.Name, base, err)
	}
	return health.Run(context.Background(), checker, 10*time.Second)
}

func TestTheDocsSpringBootExampleJudgesSpringBootsAnswers(t *testing.T) {
	ch := docsHTTPExamples(t, "/actuator/health")["/actuator/health"]
	for _, tt := range []struct {
		name, body, want string // want: "" for a pass
	}{
		{"UP, with its database", springUp, ""},
		{"DOWN", springDown, "HTTP probe failed with statuscode: 503"},
		{"UP, started without its database", springNoDB, "HTTP 200: $.components.db.status selects no value"},
	} {
		r := runAgainst(t, ch, springBoot(t, tt.body))
		if r.OK != (tt.want == "") || !r.OK && r.Output != tt.want {
			t.Errorf("%s: %+v, want %q", tt.name, r, tt.want)
		}
	}
}

func TestTheDocsAPIServerExampleJudgesTheRealAPIServersReadyz(t *testing.T) {
	ch := docsHTTPExamples(t, "/readyz")["/readyz"]
	env := kubeenv.SharedFor(t)
	if r := runAgainst(t, ch, env.Server); !r.OK {
		t.Fatalf("the real API server's /readyz: %+v, want a pass", r)
	}
	// A server in front that answers 200 for it is not the API server.
	impostor := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "[+]ping ok\n[+]etcd ok\nreadyz check passed\n")
	}))
	t.Cleanup(impostor.Close)
	if r := runAgainst(t, ch, impostor.URL); r.OK || !strings.Contains(r.Output, "header Audit-Id is missing") {
		t.Fatalf("a 200 from another server: %+v, want the API server's Audit-Id missed", r)
	}
}

package probe_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
	"github.com/vitals-dev/vitals/probe/probetest"
)

// measure builds a probe of any kind from its spec and runs it once, as a
// Monitor would.
func measure[S any](t *testing.T, build func(S) (*probe.Prober, error), spec S) health.Result {
	t.Helper()
	p, err := build(spec)
	if err != nil {
		t.Fatalf("building a probe of %+v: %v", spec, err)
	}
	return health.Run(context.Background(), p, 5*time.Second)
}

func measureHTTP(t *testing.T, spec probe.HTTPSpec) health.Result {
	t.Helper()
	return measure(t, probe.HTTP, spec)
}

func TestHTTPPassesOnA2xxAndObservesTheLatency(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL + "/healthz"})
	if !r.OK || !strings.HasPrefix(r.Output, "HTTP 200 in ") || r.ObservedUnit != "ms" {
		t.Fatalf("result %+v, want a pass saying HTTP 200 with a latency in ms", r)
	}
	if v, ok := r.ObservedValue.(float64); !ok || v < 0 {
		t.Fatalf("observed %v, want a latency", r.ObservedValue)
	}
}

func TestHTTPFailsOutsideTheStatusSetWithTheKubeletsWords(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "OIDC Setup is not complete yet. password=hunter2", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL})
	// The kubelet's output, and no body: it may hold secrets.
	if r.OK || r.Output != "HTTP probe failed with statuscode: 503" {
		t.Fatalf("result %+v, want the kubelet's failure text", r)
	}
	if r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL, Status: "200,503"}); !r.OK {
		t.Fatalf("503 in the status set: %+v, want a pass", r)
	}
}

func TestHTTPStatusSetsTakeListsAndRanges(t *testing.T) {
	tests := []struct {
		set  string
		in   []int
		out  []int
		fail string
	}{
		{set: "200-399", in: []int{200, 302, 399}, out: []int{199, 400, 503}},
		{set: "200,204,300-399", in: []int{200, 204, 301}, out: []int{201, 400}},
		{set: " 200 , 503 ", in: []int{200, 503}, out: []int{404}},
		{set: "abc", fail: `status set "abc": "abc" is not an HTTP status code (100-599)`},
		{set: "500-200", fail: `status set "500-200": range 500-200 runs backwards`},
		{set: "200,99", fail: `status set "200,99": "99" is not an HTTP status code (100-599)`},
		{set: "", fail: `status set "" is empty`},
	}
	for _, tt := range tests {
		s, err := probe.ParseStatusSet(tt.set)
		if tt.fail != "" {
			if err == nil || err.Error() != tt.fail {
				t.Errorf("ParseStatusSet(%q): %v, want %q", tt.set, err, tt.fail)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseStatusSet(%q): %v", tt.set, err)
		}
		for _, c := range tt.in {
			if !s.Contains(c) {
				t.Errorf("%q does not contain %d", tt.set, c)
			}
		}
		for _, c := range tt.out {
			if s.Contains(c) {
				t.Errorf("%q contains %d", tt.set, c)
			}
		}
	}
}

// By default vitals follows redirects as the kubelet's prober does
// (pkg/probe/http, RedirectChecker with followNonLocalRedirects false): to
// the same host, at most 10; a redirect to another host is the answer.
func TestHTTPFollowsRedirectsOnTheSameHostOnlyByDefaultAsTheKubeletDoes(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "never asked", http.StatusInternalServerError)
	}))
	defer other.Close()
	// other's URL is on 127.0.0.1; reach the redirecting server as localhost so the hosts differ.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hop":
			http.Redirect(w, r, "/done", http.StatusFound)
		case "/done":
			fmt.Fprint(w, "done")
		case "/away":
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		}
	}))
	defer srv.Close()
	local := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)

	if r := measureHTTP(t, probe.HTTPSpec{URL: local + "/hop"}); !r.OK || !strings.HasPrefix(r.Output, "HTTP 200 in ") {
		t.Fatalf("same-host redirect: %+v, want it followed to a 200", r)
	}
	// A redirect to another host is the answer: a 3xx, which passes as in the kubelet.
	r := measureHTTP(t, probe.HTTPSpec{URL: local + "/away"})
	if !r.OK || !strings.HasPrefix(r.Output, "HTTP 302 in ") || !strings.HasSuffix(r.Output, " (a redirect to 127.0.0.1, not followed)") {
		t.Fatalf("redirect to another host: %+v, want a passing 302 that says it was not followed", r)
	}
	if r := measureHTTP(t, probe.HTTPSpec{URL: local + "/away", Status: "200"}); r.OK {
		t.Fatalf("redirect to another host with status 200 only: %+v, want a failure", r)
	}
	// The kubelet's code fails a probe after 10 redirects (its docs say otherwise).
	if r := measureHTTP(t, probe.HTTPSpec{URL: local + "/loop"}); r.OK || !strings.Contains(r.Output, "stopped after 10 redirects") {
		t.Fatalf("redirect loop: %+v, want a failure after 10 redirects", r)
	}
}

func TestHTTPWithoutFollowingRedirectsExpectsA302AndItsLocation(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/app":
			http.Redirect(w, r, "/login?next=/app", http.StatusFound)
		case "/login":
			fmt.Fprint(w, "login form")
		}
	}))
	defer srv.Close()
	loginRedirect := probe.HTTPSpec{URL: srv.URL + "/app", Status: "302", ResponseHeader: http.Header{"Location": {`^/login\?next=`}}}
	// Followed, as by default, the redirect ends at the form: the 302 the
	// check expects is never seen.
	if r := measureHTTP(t, loginRedirect); r.OK || r.Output != "HTTP probe failed with statuscode: 200" {
		t.Fatalf("a same-host 302, followed: %+v, want the 200 of the login form to fail status 302", r)
	}
	loginRedirect.NoFollowRedirects = true
	if r := measureHTTP(t, loginRedirect); !r.OK || !strings.HasPrefix(r.Output, "HTTP 302 in ") || strings.Contains(r.Output, "redirect") {
		t.Fatalf("the same 302, not followed: %+v, want a pass with its Location matched", r)
	}
	loginRedirect.ResponseHeader = http.Header{"location": {"^/sso"}}
	if r := measureHTTP(t, loginRedirect); r.OK || r.Output != `HTTP 302: header Location does not match "^/sso"` {
		t.Fatalf("a Location elsewhere: %+v, want the header named", r)
	}
}

func TestHTTPSendsARequestBodyWithItsMethodAndHeaders(t *testing.T) {
	type request struct{ method, contentType, body string }
	got := make(chan request, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- request{r.Method, r.Header.Get("Content-Type"), string(body)}
		switch {
		case r.URL.Path == "/moved":
			http.Redirect(w, r, "/graphql", http.StatusTemporaryRedirect) // the method and body again
		case r.Method != http.MethodPost || r.ContentLength != int64(len(body)) || !strings.Contains(string(body), "__typename"):
			http.Error(w, "want a POST of a query", http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	const query = `{"query":"{ __typename }"}`
	spec := probe.HTTPSpec{URL: srv.URL + "/graphql", Method: "POST", RequestBody: query,
		Header: http.Header{"Content-Type": {"application/json"}}}
	if r := measureHTTP(t, spec); !r.OK {
		t.Fatalf("a POST of a query: %+v, want the server to take it", r)
	}
	if r := <-got; r != (request{"POST", "application/json", query}) {
		t.Fatalf("the server got %+v", r)
	}
	spec.URL = srv.URL + "/moved"
	if r := measureHTTP(t, spec); !r.OK {
		t.Fatalf("a POST redirected by a 307: %+v, want the body sent again", r)
	}
	for range 2 {
		if r := <-got; r.body != query {
			t.Fatalf("the server got %+v, want the body each time", r)
		}
	}
	spec.RequestBody, spec.URL = "", srv.URL+"/graphql"
	if r := measureHTTP(t, spec); r.OK || r.Output != "HTTP probe failed with statuscode: 400" {
		t.Fatalf("a POST with no body: %+v, want the server's 400", r)
	}
}

func TestHTTPResponseHeadersMustBeThereAndMatchAndTheOutputNamesThem(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Add("Set-Cookie", "csrf=1")
		w.Header().Add("Set-Cookie", "session=s3cret")
		fmt.Fprint(w, "{}")
	}))
	defer srv.Close()
	tests := []struct {
		header http.Header
		want   string // "" for a pass
	}{
		{http.Header{"Content-Type": {"^application/json"}}, ""},
		{http.Header{"content-type": {"json"}, "CONTENT-TYPE": {"utf-8"}}, ""}, // one header, both patterns
		{http.Header{"X-Request-Id": {""}}, "HTTP 200: header X-Request-Id is missing"},
		{http.Header{"Set-Cookie": {"^session=", "^csrf="}}, ""}, // each pattern, one of the values
		{http.Header{"Set-Cookie": {"^token="}}, `HTTP 200: header Set-Cookie does not match "^token="`},
		{http.Header{"Content-Type": {"^text/"}, "X-Version": {"."}},
			`HTTP 200: header Content-Type does not match "^text/"; header X-Version is missing`},
	}
	for _, tt := range tests {
		r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL, ResponseHeader: tt.header})
		if r.OK != (tt.want == "") || !r.OK && r.Output != tt.want {
			t.Errorf("response headers %v: %+v, want %q", tt.header, r, tt.want)
		}
		if strings.Contains(r.Output, "s3cret") {
			t.Errorf("response headers %v: %q shows a header's value", tt.header, r.Output)
		}
	}
}

func TestHTTPChecksAWholeBodyOfAtMost10KiBWithCheckBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			fmt.Fprint(w, `{"status":"DOWN"}`)
		case "/exact":
			fmt.Fprint(w, strings.Repeat("x", 10<<10))
		case "/long":
			fmt.Fprint(w, strings.Repeat("x", 10<<10+1))
		case "/gone":
			http.Error(w, `{"status":"DOWN"}`, http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	var judged [][]byte
	check := func(body []byte) error {
		judged = append(judged, body)
		if bytes.Contains(body, []byte("DOWN")) {
			return errors.New("status is DOWN")
		}
		return nil
	}
	if r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL + "/health", CheckBody: check}); r.OK || r.Output != "HTTP 200: status is DOWN" {
		t.Fatalf("a body the check refuses: %+v, want its error after the status", r)
	}
	if r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL + "/exact", CheckBody: check}); !r.OK || len(judged[1]) != 10<<10 {
		t.Fatalf("a body of 10 KiB: %+v, want it judged whole", r)
	}
	want := "HTTP 200: the body is longer than 10 KiB, all that is read of one: too long to judge whole"
	if r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL + "/long", CheckBody: check}); r.OK || r.Output != want || len(judged) != 2 {
		t.Fatalf("a body of 10 KiB and a byte: %+v, want %q, the check not called", r, want)
	}
	// The status comes first, and a pattern before the check.
	if r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL + "/gone", CheckBody: check}); r.Output != "HTTP probe failed with statuscode: 503" {
		t.Fatalf("a 503: %+v, want the status to fail it", r)
	}
	if r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL + "/health", Body: "UP", CheckBody: check}); r.Output != `HTTP 200: body does not match "UP"` || len(judged) != 2 {
		t.Fatalf("a body pattern that fails: %+v, want it said before the check runs", r)
	}
}

func TestHTTPSendsItsHeadersAndTheHostHeaderSetsTheVirtualHost(t *testing.T) {
	got := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r }))
	defer srv.Close()
	r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL + "/x", Method: "HEAD",
		Header: http.Header{"Host": {"api.example.com"}, "X-Probe": {"1", "2"}}})
	if !r.OK {
		t.Fatalf("result %+v", r)
	}
	req := <-got
	switch {
	case req.Method != "HEAD":
		t.Errorf("method %s, want HEAD", req.Method)
	case req.Host != "api.example.com":
		t.Errorf("Host %q, want the virtual host", req.Host)
	case !strings.HasPrefix(req.UserAgent(), "vitals/"):
		t.Errorf("User-Agent %q, want vitals/<version>", req.UserAgent())
	case req.Header.Get("Accept") != "*/*":
		t.Errorf("Accept %q, want */*", req.Header.Get("Accept"))
	case len(req.Header["X-Probe"]) != 2:
		t.Errorf("X-Probe %v, want both values", req.Header["X-Probe"])
	case !req.Close:
		t.Errorf("the request keeps its connection alive; a probe must not")
	}
	measureHTTP(t, probe.HTTPSpec{URL: srv.URL, Header: http.Header{"User-Agent": {""}, "Accept": {"text/plain"}}})
	req = <-got
	if _, ok := req.Header["User-Agent"]; ok || req.Header.Get("Accept") != "text/plain" {
		t.Errorf("headers %v: an empty User-Agent removes it, and Accept is the spec's", req.Header)
	}
}

func TestHTTPTakesHeaderNamesInAnyCaseAndValuesWithTabs(t *testing.T) {
	got := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r }))
	defer srv.Close()
	// A library user's map need not be canonical: "user-agent" replaces the
	// default User-Agent, and "host" sets the virtual host.
	r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL, Header: http.Header{
		"user-agent": {"ops-probe/2"}, "host": {"api.example.com"}, "X-Token": {"a\tb"}}})
	if !r.OK {
		t.Fatalf("result %+v", r)
	}
	req := <-got
	if ua := req.Header["User-Agent"]; len(ua) != 1 || ua[0] != "ops-probe/2" {
		t.Errorf("User-Agent %q, want the spec's alone", ua)
	}
	if req.Host != "api.example.com" || len(req.Header["Host"]) != 0 {
		t.Errorf("Host %q, header %v; want the virtual host, sent once", req.Host, req.Header)
	}
	if req.Header.Get("X-Token") != "a\tb" {
		t.Errorf("X-Token %q, want a tab kept", req.Header.Get("X-Token"))
	}
}

func TestHTTPSVerifiesTheVirtualHostOfTheHostHeader(t *testing.T) {
	sni := make(chan string, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sni <- r.TLS.ServerName
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // a refused handshake is one of the cases
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600)

	// httptest's certificate is for example.com (and 127.0.0.1): the name
	// sent and verified is the Host header's, without its port.
	r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL, Header: http.Header{"Host": {"example.com:8443"}}, TLS: probe.TLSOptions{CAFile: ca}})
	if !r.OK {
		t.Fatalf("Host example.com: %+v, want a pass", r)
	}
	if name := <-sni; name != "example.com" {
		t.Errorf("SNI %q, want example.com", name)
	}
	r = measureHTTP(t, probe.HTTPSpec{URL: srv.URL, Header: http.Header{"Host": {"api.other.test"}}, TLS: probe.TLSOptions{CAFile: ca}})
	if r.OK || !strings.Contains(r.Output, "not api.other.test") {
		t.Fatalf("Host api.other.test: %+v, want the certificate refused for that name", r)
	}
	// A server name given wins over the Host header.
	r = measureHTTP(t, probe.HTTPSpec{URL: srv.URL, Header: http.Header{"Host": {"api.other.test"}},
		TLS: probe.TLSOptions{CAFile: ca, ServerName: "example.com"}})
	if !r.OK {
		t.Fatalf("Host api.other.test, server name example.com: %+v, want a pass", r)
	}
	<-sni
}

func TestHTTPNamesTheHostOfARedirectItDidNotFollow(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/app":
			http.Redirect(w, r, "https://login.example.com/sso?next=/app", http.StatusFound)
		case "/cached":
			w.Header().Set("Location", "https://login.example.com/")
			w.WriteHeader(http.StatusNotModified)
		case "/choices":
			w.Header().Set("Location", "/app/v2") // the same host: not a redirect elsewhere
			w.WriteHeader(http.StatusMultipleChoices)
		}
	}))
	defer srv.Close()
	const note = " (a redirect to login.example.com, not followed)"
	r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL + "/app"})
	if !r.OK || !strings.HasPrefix(r.Output, "HTTP 302 in ") || !strings.HasSuffix(r.Output, note) {
		t.Fatalf("a redirect to login.example.com: %+v, want a passing 302 that names the host", r)
	}
	r = measureHTTP(t, probe.HTTPSpec{URL: srv.URL + "/app", Status: "200"})
	if want := "HTTP probe failed with statuscode: 302" + note; r.OK || r.Output != want {
		t.Fatalf("the redirect outside the status set: %+v, want %q", r, want)
	}
	for _, path := range []string{"/cached", "/choices"} {
		r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL + path})
		if !r.OK || strings.Contains(r.Output, "redirect") {
			t.Errorf("%s: %+v, want a pass with no note of a redirect", path, r)
		}
	}
}

func TestHTTPIgnoresTheProxyInTheEnvironment(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("http_proxy", "http://127.0.0.1:1")
	t.Setenv("NO_PROXY", "")
	if r := measureHTTP(t, probe.HTTPSpec{URL: strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)}); !r.OK {
		t.Fatalf("with a dead proxy in the environment: %+v, want the target reached directly", r)
	}
}

func TestHTTPMatchesTheFirst10KiBOfTheBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ready":
			fmt.Fprint(w, `{"status":"ready","db":"up"}`)
		case "/maintenance":
			fmt.Fprint(w, `{"status":"maintenance"}`)
		case "/late":
			fmt.Fprint(w, strings.Repeat(" ", 20<<10)+"ready")
		}
	}))
	defer srv.Close()
	tests := []struct {
		path, body, notBody string
		want                string // "" for a pass
	}{
		{"/ready", `"status":"ready"`, "", ""},
		{"/ready", `"db":"down"`, "", `HTTP 200: body does not match "\"db\":\"down\""`},
		{"/maintenance", "", "maintenance", `HTTP 200: body matches "maintenance"`},
		{"/ready", "", "maintenance", ""},
		{"/late", "ready", "", `HTTP 200: body does not match "ready"`},
	}
	for _, tt := range tests {
		r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL + tt.path, Body: tt.body, NotBody: tt.notBody})
		if r.OK != (tt.want == "") || !r.OK && r.Output != tt.want {
			t.Errorf("%s body %q not-body %q: %+v, want %q", tt.path, tt.body, tt.notBody, r, tt.want)
		}
	}
}

func TestHTTPSVerifiesTheServerUnlessToldNotTo(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	srv.StartTLS()
	defer srv.Close()
	if r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL}); r.OK || !strings.Contains(r.Output, "certificate") {
		t.Fatalf("an unknown certificate: %+v, want a verification failure", r)
	}
	if r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL, TLS: probe.TLSOptions{InsecureSkipVerify: true}}); !r.OK {
		t.Fatalf("with InsecureSkipVerify: %+v", r)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600)
	if r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL, TLS: probe.TLSOptions{CAFile: ca}}); !r.OK {
		t.Fatalf("with the server's CA: %+v", r)
	}
	if r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL, TLS: probe.TLSOptions{CAFile: ca, ServerName: "other.example"}}); r.OK {
		t.Fatalf("with a server name the certificate does not have: %+v, want a failure", r)
	}
}

func TestHTTPSPresentsTheClientCertificate(t *testing.T) {
	certFile, keyFile := probetest.NewCA(t).Client(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	insecure := probe.TLSOptions{InsecureSkipVerify: true}
	if r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL, TLS: insecure}); r.OK {
		t.Fatalf("without a client certificate: %+v, want the handshake refused", r)
	}
	withCert := probe.TLSOptions{InsecureSkipVerify: true, CertFile: certFile, KeyFile: keyFile}
	if r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL, TLS: withCert, Body: "^vitals-probe$"}); !r.OK {
		t.Fatalf("with the client certificate: %+v", r)
	}
}

func TestHTTPRejectsABadSpecWhenBuilt(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.pem")
	tests := []struct {
		spec probe.HTTPSpec
		want string
	}{
		{probe.HTTPSpec{URL: "ftp://example.com/"}, `http probe: URL "ftp://example.com/": scheme must be http or https`},
		{probe.HTTPSpec{URL: "http://"}, `http probe: URL "http://" has no host`},
		{probe.HTTPSpec{URL: "http://a b/"}, `http probe: URL "http://a b/": parse "http://a b/": invalid character " " in host name`},
		{probe.HTTPSpec{URL: "http://x/", Method: "get"}, `http probe: method "get" is not an HTTP method (methods are upper case: GET)`},
		{probe.HTTPSpec{URL: "http://x/", Method: "GET /"}, `http probe: method "GET /" is not an HTTP method`},
		{probe.HTTPSpec{URL: "http://x/", Method: "HEAD", Body: "ready"}, `http probe: body pattern "ready" with method HEAD: a HEAD answer has no body to match`},
		{probe.HTTPSpec{URL: "http://x/", Method: "HEAD", NotBody: "down"}, `http probe: not-body pattern "down" with method HEAD: a HEAD answer has no body to match`},
		{probe.HTTPSpec{URL: "http://x/", Header: http.Header{"X(": {"1"}}}, `http probe: header "X(": the name is not a token`},
		{probe.HTTPSpec{URL: "http://x/", Header: http.Header{"X Probe": {"1"}}}, `http probe: header "X Probe": the name is not a token`},
		{probe.HTTPSpec{URL: "http://x/", Header: http.Header{"": {"1"}}}, `http probe: header "": the name is not a token`},
		{probe.HTTPSpec{URL: "http://x/", Header: http.Header{"X": {"1\r\nX-Injected: 1"}}}, `http probe: header "X": the value has a control character`},
		{probe.HTTPSpec{URL: "http://x/", Header: http.Header{"X": {"ok", "a\x00b"}}}, `http probe: header "X": the value has a control character`},
		{probe.HTTPSpec{URL: "http://x/", Header: http.Header{"X": {"a\x7fb"}}}, `http probe: header "X": the value has a control character`},
		{probe.HTTPSpec{URL: "http://x/", Method: "HEAD", CheckBody: func([]byte) error { return nil }}, `http probe: a body check with method HEAD: a HEAD answer has no body to judge`},
		{probe.HTTPSpec{URL: "http://x/", ResponseHeader: http.Header{"Location:": {"/"}}}, `http probe: response header "Location:": the name is not a token`},
		{probe.HTTPSpec{URL: "http://x/", ResponseHeader: http.Header{"Location": {}}}, `http probe: response header "Location": no pattern ("" for any value)`},
		{probe.HTTPSpec{URL: "http://x/", ResponseHeader: http.Header{"location": {"[z-a]"}}}, "http probe: response header Location pattern \"[z-a]\": error parsing regexp: invalid character class range: `z-a`"},
		{probe.HTTPSpec{URL: "http://x/", Status: "2xx"}, `http probe: status set "2xx": "2xx" is not an HTTP status code (100-599)`},
		{probe.HTTPSpec{URL: "http://x/", Body: "("}, "http probe: body pattern \"(\": error parsing regexp: missing closing ): `(`"},
		{probe.HTTPSpec{URL: "http://x/", NotBody: "[z-a]"}, "http probe: not-body pattern \"[z-a]\": error parsing regexp: invalid character class range: `z-a`"},
		{probe.HTTPSpec{URL: "http://x/", TLS: probe.TLSOptions{InsecureSkipVerify: true}}, `http probe: URL "http://x/": TLS options need an https URL`},
		{probe.HTTPSpec{URL: "https://x/", TLS: probe.TLSOptions{CAFile: missing}}, "http probe: CA file: open " + missing + ": no such file or directory"},
		{probe.HTTPSpec{URL: "https://x/", TLS: probe.TLSOptions{CertFile: "c.pem"}}, `http probe: client certificate needs both a certificate file and a key file (got "c.pem" and "")`},
	}
	for _, tt := range tests {
		if _, err := probe.HTTP(tt.spec); err == nil || err.Error() != tt.want {
			t.Errorf("HTTP(%+v):\n got %v\nwant %s", tt.spec, err, tt.want)
		}
	}
}

func TestABadSpecKeepsItsCauseForErrorsIsAndAs(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.pem")
	_, httpErr := probe.HTTP(probe.HTTPSpec{URL: "https://x/", TLS: probe.TLSOptions{CAFile: missing}})
	_, tlsErr := probe.TLS(probe.TLSSpec{Address: "x:443", TLS: probe.TLSOptions{CAFile: missing}})
	for _, err := range []error{httpErr, tlsErr} {
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error %v does not wrap fs.ErrNotExist", err)
		}
	}
	_, err := probe.HTTP(probe.HTTPSpec{URL: "http://a b/"})
	if _, ok := errors.AsType[*url.Error](err); !ok {
		t.Errorf("error %v does not wrap the *url.Error", err)
	}
}

func TestHTTPAndTCPObserveTheLatencyInMillisecondsToTheMicrosecond(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	httpResult := measureHTTP(t, probe.HTTPSpec{URL: srv.URL})
	tcpResult := measureTCP(t, probe.TCPSpec{Address: srv.Listener.Addr().String()}, 5*time.Second)
	for _, r := range []health.Result{httpResult, tcpResult} {
		v, ok := r.ObservedValue.(float64)
		if us := v * 1000; !r.OK || !ok || v <= 0 || math.Abs(us-math.Round(us)) > 1e-6 || r.ObservedUnit != "ms" {
			t.Errorf("result %+v, want a latency in ms with three decimals", r)
		}
	}
}

func TestHTTPFailsAtItsTimeoutWhenTheServerNeverAnswers(t *testing.T) {
	ln := probetest.SilentListener(t)
	p, err := probe.HTTP(probe.HTTPSpec{URL: "http://" + ln.Addr().String() + "/"})
	if err != nil {
		t.Fatal(err)
	}
	assertFailsAtTimeout(t, p)
}

// assertFailsAtTimeout runs p with a 300ms timeout: it must fail saying it
// timed out, at the timeout and not later (within 100ms, the best of three
// tries, as a loaded machine may stall any one of them).
func assertFailsAtTimeout(t *testing.T, p health.Checker) {
	t.Helper()
	const timeout, slack = 300 * time.Millisecond, 100 * time.Millisecond
	var took []time.Duration
	for range 3 {
		start := time.Now()
		done := make(chan health.Result, 1)
		go func() { done <- health.Run(context.Background(), p, timeout) }()
		var r health.Result
		select {
		case r = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("the probe did not return within 5s of a %v timeout", timeout)
		}
		elapsed := time.Since(start)
		if r.OK || !strings.Contains(r.Output, "timed out") {
			t.Fatalf("result %+v, want a failure that says it timed out", r)
		}
		if elapsed >= timeout && elapsed <= timeout+slack {
			return
		}
		took = append(took, elapsed)
	}
	t.Fatalf("the probe returned after %v; want between %v and %v", took, timeout, timeout+slack)
}

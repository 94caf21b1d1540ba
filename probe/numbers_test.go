package probe_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
	"github.com/vitals-dev/vitals/version"
)

// An answer slower than MaxDuration fails, saying how slow, after its
// status; a quicker one passes.
func TestHTTPFailsAnAnswerSlowerThanMaxDuration(t *testing.T) {
	var delay atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(delay.Load()))
		if r.URL.Path == "/down" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	if r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL, MaxDuration: time.Second}); !r.OK {
		t.Fatalf("a quick answer: %+v", r)
	}
	delay.Store(int64(150 * time.Millisecond))
	r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL, MaxDuration: 100 * time.Millisecond})
	if r.OK || !strings.HasPrefix(r.Output, "HTTP 200 in ") || !strings.HasSuffix(r.Output, ": slower than 100ms") {
		t.Fatalf("a slow answer: %+v, want a failure saying how slow", r)
	}
	if v, _ := r.ObservedValue.(float64); v < 150 {
		t.Fatalf("observed %v ms, want the latency, at least 150", r.ObservedValue)
	}
	if r := measureHTTP(t, probe.HTTPSpec{URL: srv.URL + "/down", MaxDuration: 100 * time.Millisecond}); r.Output != "HTTP probe failed with statuscode: 503" {
		t.Fatalf("a slow 503: %+v, want the status judged first", r)
	}
	if _, err := probe.HTTP(probe.HTTPSpec{URL: srv.URL, MaxDuration: -time.Second}); err == nil {
		t.Fatal("a negative max duration was taken")
	}
}

// A bearer token file is read at every run, and refused at build when it
// cannot be read or goes with an Authorization header.
func TestHTTPSendsTheBearerTokenOfAFile(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	os.WriteFile(token, []byte("  eyJhbGciOi.first\n"), 0o600)
	p, err := probe.HTTP(probe.HTTPSpec{URL: srv.URL, BearerTokenFile: token})
	if err != nil {
		t.Fatal(err)
	}
	run := func() health.Result { return health.Run(t.Context(), p, 5*time.Second) }
	if r := run(); !r.OK || got.Load() != "Bearer eyJhbGciOi.first" {
		t.Fatalf("%+v, sent %q", r, got.Load())
	}
	os.WriteFile(token, []byte("eyJhbGciOi.second"), 0o600)
	if r := run(); !r.OK || got.Load() != "Bearer eyJhbGciOi.second" {
		t.Fatalf("after the token rotated: %+v, sent %q", r, got.Load())
	}
	if r := run(); strings.Contains(r.Output, "eyJ") {
		t.Fatalf("an output shows the token: %q", r.Output)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	twoLines := filepath.Join(dir, "two")
	os.WriteFile(twoLines, []byte("a\nb\n"), 0o600)
	for _, tt := range []struct {
		spec probe.HTTPSpec
		want string
	}{
		{probe.HTTPSpec{URL: srv.URL, BearerTokenFile: filepath.Join(dir, "none")}, "bearer token file: open "},
		{probe.HTTPSpec{URL: srv.URL, BearerTokenFile: empty}, "is empty"},
		{probe.HTTPSpec{URL: srv.URL, BearerTokenFile: twoLines}, "holds more than one line"},
		{probe.HTTPSpec{URL: srv.URL, BearerTokenFile: token, Header: http.Header{"authorization": {"Basic eA=="}}}, "an Authorization header and a bearer token file: give one"},
	} {
		_, err := probe.HTTP(tt.spec)
		var se *probe.SpecError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want …%s…", tt.spec, err, tt.want)
		}
	}
}

// A request built on its own is an http check's request, field for field:
// the kind that reads its answer names itself in what is wrong.
func TestAnHTTPRequestOfAnotherKind(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s %s", r.Method, r.Header.Get("User-Agent"), r.Header.Get("X-Tenant"))
	}))
	defer srv.Close()
	req, err := probe.NewHTTPRequest("metric", probe.HTTPSpec{URL: srv.URL + "/metrics", Header: http.Header{"X-Tenant": {"a"}}})
	if err != nil || req.String() != "GET "+srv.URL+"/metrics" {
		t.Fatalf("%v, %v", req, err)
	}
	res, err := req.Do(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if want := "GET vitals/" + version.Version + " a"; string(body) != want {
		t.Fatalf("the server saw %q, want %q", body, want)
	}
	if _, err := probe.NewHTTPRequest("metric", probe.HTTPSpec{URL: "ftp://x/"}); err == nil || !strings.HasPrefix(err.Error(), "metric probe: ") {
		t.Fatalf("%v, want a metric probe's error", err)
	}
}

// An exec check with an output comparison passes when the command exits 0
// and prints a number that meets it, which is its observed value.
func TestExecComparesTheNumberItsCommandPrints(t *testing.T) {
	for _, tt := range []struct {
		printed, want string
		ok            bool
		output        string
		value         any
		unit          string
	}{
		{"42\n", "< 80", true, "42", 42.0, health.Dimensionless},
		{" 93%\n", "< 80", false, "the output is 93 (want < 80)", 93.0, "percent"},
		{"93 %", "<= 93", true, "93 %", 93.0, "percent"},
		{"0.25", ">= 0.5", false, "the output is 0.25 (want >= 0.5)", 0.25, health.Dimensionless},
		{"NaN", "!= 0", true, "NaN", "NaN", health.Dimensionless},
		{"lag: 12", "< 80", false, `the output's last line "lag: 12" is not a number, to compare < 80`, nil, ""},
		{"", "< 80", false, `the output's last line "" is not a number, to compare < 80`, nil, ""},
		{"Use%\n 85%\n", "< 90", true, "Use%\n 85%", 85.0, "percent"}, // df --output=pcent: a heading, then the number
	} {
		spec := helperSpec(t, "exit", "0", tt.printed)
		spec.Output = tt.want
		r := runExec(t, spec)
		if r.OK != tt.ok || r.Output != tt.output || r.ObservedValue != tt.value || r.ObservedUnit != tt.unit {
			t.Errorf("printing %q, want %s: %+v; want ok %v, output %q, value %v %s", tt.printed, tt.want, r, tt.ok, tt.output, tt.value, tt.unit)
		}
	}
	// A command that fails fails as ever, whatever it prints.
	spec := helperSpec(t, "exit", "2", "5")
	spec.Output = "< 80"
	if r := runExec(t, spec); r.OK || r.Output != "5" || r.ObservedValue != 2 {
		t.Errorf("a failing command: %+v", r)
	}
	if err := (probe.ExecSpec{Command: []string{"df"}, Output: "about 80"}).Validate(); err == nil || !strings.Contains(err.Error(), "exec probe: output: comparison") {
		t.Errorf("a bad comparison: %v", err)
	}
}

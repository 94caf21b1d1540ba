package probe_test

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/probe"
	"github.com/vitals-dev/vitals/probe/probetest"
)

// packageKinds are the kinds this package builds, as Prober.Kind names them.
var packageKinds = []string{"dns", "exec", "file", "http", "tcp", "tls"}

// Every kind of the package gives each value it observes a unit, when it
// passes and when it fails: the IETF JSON format serves no value without
// one. The cases walk every kind, and each kind observes a value in at least
// one of them, so a kind that loses its unit fails here.
func TestEveryKindGivesTheValueItObservesAUnit(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer down.Close()
	echo := serveTCP(t, func(c net.Conn) { fmt.Fprint(c, "+PONG\r\n") })
	ca := probetest.NewCA(t)
	cert := serveTLS(t, ca.Server(t, 400*24*time.Hour))
	expired := serveTLS(t, ca.Server(t, -36*time.Hour))
	dns := serveDNS(t, testZone)
	dir := t.TempDir()
	full, empty := filepath.Join(dir, "peer1.conf"), filepath.Join(dir, "empty.conf")
	os.WriteFile(full, []byte("[Peer]\n"), 0o600)
	os.WriteFile(empty, nil, 0o600)

	build := func(p *probe.Prober, err error) *probe.Prober {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	probes := []*probe.Prober{
		build(probe.HTTP(probe.HTTPSpec{URL: ok.URL})),
		build(probe.HTTP(probe.HTTPSpec{URL: down.URL})),
		build(probe.TCP(probe.TCPSpec{Address: echo})),
		build(probe.TCP(probe.TCPSpec{Address: echo, Send: "PING\r\n", Expect: "+OK"})),
		build(probe.TLS(probe.TLSSpec{Address: cert, TLS: probe.TLSOptions{CAFile: ca.File}})),
		build(probe.TLS(probe.TLSSpec{Address: cert, MinValidity: 500 * 24 * time.Hour, TLS: probe.TLSOptions{CAFile: ca.File}})),
		build(probe.TLS(probe.TLSSpec{Address: expired, TLS: probe.TLSOptions{CAFile: ca.File}})),
		build(probe.Exec(helperSpec(t, "exit", "0"))),
		build(probe.Exec(helperSpec(t, "exit", "3"))),
		build(probe.Exec(helperSpec(t, "sigterm-self"))),
		build(probe.File(probe.FileSpec{Path: full, NonEmpty: true})),
		build(probe.File(probe.FileSpec{Path: empty, NonEmpty: true})),
		build(probe.DNS(probe.DNSSpec{Name: "app.test", Server: dns})),
		build(probe.DNS(probe.DNSSpec{Name: "app.test", Type: "txt", Server: dns})),
	}
	observed := map[string]bool{}
	for _, p := range probes {
		obs, err := p.Measure(context.Background())
		if obs.Value != nil {
			observed[p.Kind()] = true
			if obs.Unit == "" {
				t.Errorf("%s (error %v): observed %v with no unit", p, err, obs.Value)
			}
		}
	}
	if got := slices.Sorted(maps.Keys(observed)); !slices.Equal(got, packageKinds) {
		t.Errorf("the kinds that observed a value: %v, want every kind of the package, %v", got, packageKinds)
	}
}

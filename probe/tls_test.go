package probe_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
	"github.com/vitals-dev/vitals/probe/probetest"
)

// serveTLS serves TLS handshakes with cert on a free local port: a server
// that completes the handshake and hangs up.
func serveTLS(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	config := &tls.Config{Certificates: []tls.Certificate{cert}}
	return serveTCP(t, func(c net.Conn) {
		c.SetDeadline(time.Now().Add(5 * time.Second))
		tls.Server(c, config).Handshake() // a refused certificate is some tests' point
	})
}

func measureTLS(t *testing.T, spec probe.TLSSpec) health.Result {
	t.Helper()
	return measure(t, probe.TLS, spec)
}

func TestTLSPassesWithTheServersCAAndObservesTheDaysLeft(t *testing.T) {
	ca := probetest.NewCA(t)
	cert := ca.Server(t, 400*24*time.Hour)
	addr := serveTLS(t, cert)
	until := cert.Leaf.NotAfter.UTC().Format(time.RFC3339)
	_, port, _ := net.SplitHostPort(addr)
	// The server name is the address's host: an IP address, then a DNS name.
	for _, addr := range []string{addr, "localhost:" + port} {
		p, err := probe.TLS(probe.TLSSpec{Address: addr, TLS: probe.TLSOptions{CAFile: ca.File}})
		if err != nil {
			t.Fatal(err)
		}
		if p.Kind() != "tls" || p.String() != "tls "+addr {
			t.Errorf("kind %q, string %q; want tls and %q", p.Kind(), p.String(), "tls "+addr)
		}
		r := health.Run(context.Background(), p, 5*time.Second)
		want := `certificate for "localhost" valid until ` + until + ` (400 days)`
		if !r.OK || r.Output != want || r.ObservedUnit != "days" {
			t.Fatalf("%s: result %+v, want a pass saying %q", addr, r, want)
		}
		if v, ok := r.ObservedValue.(float64); !ok || v < 399.99 || v > 400 {
			t.Fatalf("observed %v, want 400 days", r.ObservedValue)
		}
	}
}

func TestTLSVerifiesTheServerUnlessToldNotTo(t *testing.T) {
	ca := probetest.NewCA(t)
	addr := serveTLS(t, ca.Server(t, 400*24*time.Hour))
	r := measureTLS(t, probe.TLSSpec{Address: addr})
	want := "TLS handshake: tls: failed to verify certificate: x509: certificate signed by unknown authority"
	if r.OK || r.Output != want {
		t.Fatalf("without the CA: %+v,\nwant a failure saying %s", r, want)
	}
	if r := measureTLS(t, probe.TLSSpec{Address: addr, TLS: probe.TLSOptions{InsecureSkipVerify: true}}); !r.OK {
		t.Fatalf("with InsecureSkipVerify: %+v, want a pass", r)
	}
	r = measureTLS(t, probe.TLSSpec{Address: addr, TLS: probe.TLSOptions{CAFile: ca.File, ServerName: "db.example"}})
	want = "TLS handshake: tls: failed to verify certificate: x509: certificate is valid for localhost, not db.example"
	if r.OK || r.Output != want {
		t.Fatalf("with a server name the certificate does not have: %+v,\nwant a failure saying %s", r, want)
	}
}

func TestTLSFailsWhenTheCertificateExpiresWithinTheMinimum(t *testing.T) {
	ca := probetest.NewCA(t)
	cert := ca.Server(t, 3*24*time.Hour)
	addr := serveTLS(t, cert)
	r := measureTLS(t, probe.TLSSpec{Address: addr, MinValidity: 7 * 24 * time.Hour, TLS: probe.TLSOptions{CAFile: ca.File}})
	want := `certificate for "localhost" expires in 3 days (` + cert.Leaf.NotAfter.UTC().Format(time.RFC3339) + `), less than the minimum of 7 days`
	if r.OK || r.Output != want {
		t.Fatalf("result %+v,\nwant a failure saying %s", r, want)
	}
	if v, ok := r.ObservedValue.(float64); !ok || v != 3 || r.ObservedUnit != "days" {
		t.Fatalf("observed %v %s, want 3 days", r.ObservedValue, r.ObservedUnit)
	}
	if r := measureTLS(t, probe.TLSSpec{Address: addr, MinValidity: 36 * time.Hour, TLS: probe.TLSOptions{CAFile: ca.File}}); !r.OK {
		t.Fatalf("with a minimum of 1.5 days: %+v, want a pass", r)
	}
}

func TestTLSFailsOnAnExpiredCertificate(t *testing.T) {
	ca := probetest.NewCA(t)
	cert := ca.Server(t, -36*time.Hour)
	addr := serveTLS(t, cert)
	// Verification refuses it in the handshake; without it, the probe does.
	r := measureTLS(t, probe.TLSSpec{Address: addr, TLS: probe.TLSOptions{CAFile: ca.File}})
	if r.OK || !strings.Contains(r.Output, "x509: certificate has expired or is not yet valid") {
		t.Fatalf("result %+v, want a verification failure", r)
	}
	r = measureTLS(t, probe.TLSSpec{Address: addr, TLS: probe.TLSOptions{InsecureSkipVerify: true}})
	want := `certificate for "localhost" expired 1.5 days ago (` + cert.Leaf.NotAfter.UTC().Format(time.RFC3339) + `)`
	if r.OK || r.Output != want || r.ObservedValue != -1.5 {
		t.Fatalf("result %+v,\nwant a failure saying %s, observing -1.5", r, want)
	}
}

func TestTLSObservesTheDaysLeftOfACertificateThatFailsVerification(t *testing.T) {
	ca := probetest.NewCA(t)
	expired := serveTLS(t, ca.Server(t, -36*time.Hour))
	r := measureTLS(t, probe.TLSSpec{Address: expired, TLS: probe.TLSOptions{CAFile: ca.File}})
	want := "TLS handshake: tls: failed to verify certificate: x509: certificate has expired or is not yet valid: "
	if r.OK || !strings.HasPrefix(r.Output, want) || r.ObservedValue != -1.5 || r.ObservedUnit != "days" {
		t.Fatalf("an expired certificate: %+v,\nwant a failure starting %q, observing -1.5 days", r, want)
	}
	untrusted := serveTLS(t, ca.Server(t, 400*24*time.Hour))
	r = measureTLS(t, probe.TLSSpec{Address: untrusted})
	want = "TLS handshake: tls: failed to verify certificate: x509: certificate signed by unknown authority"
	if v, _ := r.ObservedValue.(float64); r.OK || r.Output != want || v < 399.99 || v > 400 {
		t.Fatalf("an untrusted certificate: %+v,\nwant a failure saying %s, observing 400 days", r, want)
	}
}

// Under TLS 1.3 the client's handshake ends before the server has checked the
// client's certificate, so a server that refuses it says so after.
func TestTLSFailsWhenTheServerRefusesTheClientCertificate(t *testing.T) {
	ca, otherCA := probetest.NewCA(t), probetest.NewCA(t)
	cert := ca.Server(t, 400*24*time.Hour)
	clients := x509.NewCertPool()
	clients.AddCert(ca.Cert)
	serve := func(maxVersion uint16) string {
		config := &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert,
			ClientCAs: clients, MaxVersion: maxVersion}
		return serveTCP(t, func(c net.Conn) {
			c.SetDeadline(time.Now().Add(5 * time.Second))
			tls.Server(c, config).Handshake() // a refused certificate is the point
		})
	}
	tls13, tls12 := serve(tls.VersionTLS13), serve(tls.VersionTLS12)
	rightCert, rightKey := ca.Client(t)
	wrongCert, wrongKey := otherCA.Client(t)
	tests := []struct {
		addr, certFile, keyFile string
		want                    string // "" for a pass
	}{
		{tls13, "", "", "the server refused the client certificate: remote error: tls: certificate required"},
		{tls13, wrongCert, wrongKey, "the server refused the client certificate: remote error: tls: unknown certificate authority"},
		{tls13, rightCert, rightKey, ""},
		{tls12, "", "", "TLS handshake: remote error: tls: handshake failure"},
		{tls12, rightCert, rightKey, ""},
	}
	for _, tt := range tests {
		r := measureTLS(t, probe.TLSSpec{Address: tt.addr,
			TLS: probe.TLSOptions{CAFile: ca.File, CertFile: tt.certFile, KeyFile: tt.keyFile}})
		if r.OK != (tt.want == "") || !r.OK && r.Output != tt.want {
			t.Errorf("%s with client certificate %q: %+v, want %q", tt.addr, tt.certFile, r, tt.want)
		}
		if v, _ := r.ObservedValue.(float64); v < 399.99 {
			t.Errorf("%s with client certificate %q: observed %v, want the server certificate's 400 days", tt.addr, tt.certFile, r.ObservedValue)
		}
	}
}

func TestTLSRejectsABadSpecWhenBuilt(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.pem")
	tests := []struct {
		spec probe.TLSSpec
		want string
	}{
		{probe.TLSSpec{}, "tls probe: address is required (host:port)"},
		{probe.TLSSpec{Address: "https://example.com:443"}, `tls probe: address "https://example.com:443": too many colons in address`},
		{probe.TLSSpec{Address: "https://example.com"}, `tls probe: address "https://example.com": port "//example.com" is not a number from 1 to 65535`},
		{probe.TLSSpec{Address: "example.com:https"}, `tls probe: address "example.com:https": port "https" is not a number from 1 to 65535`},
		{probe.TLSSpec{Address: ":443"}, `tls probe: address ":443" has no host to verify the certificate against: set a server name`},
		{probe.TLSSpec{Address: "example.com:443", MinValidity: -time.Hour}, "tls probe: min validity -1h0m0s is negative"},
		{probe.TLSSpec{Address: "example.com:443", TLS: probe.TLSOptions{CAFile: missing}},
			"tls probe: CA file: open " + missing + ": no such file or directory"},
		{probe.TLSSpec{Address: "example.com:443", TLS: probe.TLSOptions{CertFile: "c.pem"}},
			`tls probe: client certificate needs both a certificate file and a key file (got "c.pem" and "")`},
	}
	for _, tt := range tests {
		if _, err := probe.TLS(tt.spec); err == nil || err.Error() != tt.want {
			t.Errorf("TLS(%+v):\n got %v\nwant %s", tt.spec, err, tt.want)
		}
	}
	for _, tls := range []probe.TLSOptions{{ServerName: "example.com"}, {InsecureSkipVerify: true}} {
		if _, err := probe.TLS(probe.TLSSpec{Address: ":443", TLS: tls}); err != nil {
			t.Errorf("an address without a host, with %+v: %v, want no error", tls, err)
		}
	}
}

func TestTLSFailsAtItsTimeoutWhenTheServerNeverCompletesTheHandshake(t *testing.T) {
	ln := probetest.SilentListener(t)
	p, err := probe.TLS(probe.TLSSpec{Address: ln.Addr().String(), TLS: probe.TLSOptions{InsecureSkipVerify: true}})
	if err != nil {
		t.Fatal(err)
	}
	assertFailsAtTimeout(t, p)

	want := "timed out after 300ms: TLS handshake: context deadline exceeded"
	if r := health.Run(context.Background(), p, 300*time.Millisecond); r.Output != want {
		t.Errorf("output %q, want %q", r.Output, want)
	}
}

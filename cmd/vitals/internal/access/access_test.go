package access_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/access"
	"github.com/vitals-dev/vitals/probe/probetest"
)

// What a client sees, by the file's details: and what the client is.
func TestDecide(t *testing.T) {
	show := func(s access.Seen) string { return fmt.Sprintf("reasons %v, page %v", s.Reasons, s.Page) }
	for _, c := range []struct {
		reach             string
		local, authorised bool
		want              string
	}{
		{"local", true, false, "reasons true, page true"},
		{"local", false, true, "reasons true, page true"},
		{"local", false, false, "reasons false, page false"},
		{"all", false, false, "reasons true, page true"},
		{"all", true, false, "reasons true, page true"},
		{"none", true, false, "reasons false, page true"},
		{"none", false, true, "reasons false, page true"},
		{"none", false, false, "reasons false, page false"},
	} {
		reach := map[string]access.Reach{"local": access.Local, "all": access.Everyone, "none": access.NoOne}[c.reach]
		if got := show(access.Decide(reach, c.local, c.authorised)); got != c.want {
			t.Errorf("details: %s, local %v, authorised %v: %s, want %s", c.reach, c.local, c.authorised, got, c.want)
		}
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:5000": true, "127.1.2.3:5000": true, "[::1]:5000": true, "[::ffff:127.0.0.1]:5000": true,
		"10.213.0.2:5000": false, "[fe80::1%eth0]:5000": false, "[::]:5000": false, "": false, "@": false,
	} {
		if got := access.Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// The token authorises a client off loopback; a new token in the file
// replaces the old at the next request; an empty file keeps the last good.
func TestTheTokenIsReadAgainWhenItChanges(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		// A time of change of its own, whatever the file system's clock grain.
		at := time.Now().Add(time.Duration(len(s)) * time.Second)
		if err := os.Chtimes(file, at, at); err != nil {
			t.Fatal(err)
		}
	}
	write("first\n")
	g, err := access.NewGuard(access.Options{TokenFile: file})
	if err != nil {
		t.Fatal(err)
	}
	page := g.Page(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("page")) }))
	code := func(remote, auth string) int {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		page.ServeHTTP(w, r)
		return w.Code
	}
	const far = "10.213.0.2:40000"
	for _, c := range []struct {
		remote, auth string
		want         int
	}{
		{"127.0.0.1:40000", "", 200},
		{far, "", 401},
		{far, "Bearer first", 200},
		{far, "bearer first", 200},
		{far, "Bearer wrong", 401},
		{far, "Basic Zmlyc3Q=", 401},
	} {
		if got := code(c.remote, c.auth); got != c.want {
			t.Errorf("%s with %q: %d, want %d", c.remote, c.auth, got, c.want)
		}
	}
	write("second-token\n")
	if got := code(far, "Bearer first"); got != 401 {
		t.Errorf("the old token after the change: %d, want 401", got)
	}
	if got := code(far, "Bearer second-token"); got != 200 {
		t.Errorf("the new token: %d, want 200", got)
	}
	write("  \n")
	if got := code(far, "Bearer second-token"); got != 200 {
		t.Errorf("the last good token, the file emptied: %d, want 200", got)
	}
}

// Without a token file, a client off loopback is answered 403, and gets
// the reasons only under details: all.
func TestWithoutATokenTheFarClientIsForbidden(t *testing.T) {
	for _, c := range []struct {
		reach   access.Reach
		reasons bool
	}{{access.Local, false}, {access.Everyone, true}, {access.NoOne, false}} {
		g, err := access.NewGuard(access.Options{Reach: c.reach})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "10.213.0.2:40000"
		r.Header.Set("Authorization", "Bearer anything")
		if got := g.Reasons(r); got != c.reasons {
			t.Errorf("reach %v: reasons %v, want %v", c.reach, got, c.reasons)
		}
	}
}

// The certificate served is the one in the files now: a rotation is served
// from the next handshake; a half-written one keeps the last good pair.
func TestTheCertificateIsReadAgainWhenItChanges(t *testing.T) {
	dir := t.TempDir()
	ca := probetest.NewCA(t)
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first := ca.ServerFor(t, time.Hour, "127.0.0.1")
	probetest.WriteKeyPair(t, first, certFile, keyFile)
	certs, err := access.NewCerts(access.CertOptions{CertFile: certFile, KeyFile: keyFile, ClientCAFile: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, len(r.TLS.VerifiedChains) > 0)
	}))
	srv.TLS = certs.Config()
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	served := func(clientCert bool) (*x509.Certificate, string) {
		t.Helper()
		cfg := &tls.Config{RootCAs: pool}
		if clientCert {
			c, k := ca.Client(t)
			pair, err := tls.LoadX509KeyPair(c, k)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		defer client.CloseIdleConnections()
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var verified string
		fmt.Fscan(resp.Body, &verified)
		return resp.TLS.PeerCertificates[0], verified
	}
	if got, verified := served(false); !got.Equal(first.Leaf) || verified != "false" {
		t.Errorf("serial %v, client verified %s; want the first, %v, and false", got.SerialNumber, verified, first.Leaf.SerialNumber)
	}
	if _, verified := served(true); verified != "true" {
		t.Errorf("a client certificate of the CA: verified %s, want true", verified)
	}
	second := ca.ServerFor(t, time.Hour, "127.0.0.1")
	probetest.WriteKeyPair(t, second, certFile, keyFile)
	later := time.Now().Add(time.Minute)
	os.Chtimes(certFile, later, later)
	if got, _ := served(false); !got.Equal(second.Leaf) {
		t.Errorf("after the rotation: serial %v, want the second, %v", got.SerialNumber, second.Leaf.SerialNumber)
	}
	// Halfway: a third certificate beside the second's key.
	third := ca.ServerFor(t, time.Hour, "127.0.0.1")
	probetest.WriteKeyPair(t, third, certFile, filepath.Join(dir, "unused.key"))
	later = later.Add(time.Minute)
	os.Chtimes(certFile, later, later)
	if got, _ := served(false); !got.Equal(second.Leaf) {
		t.Errorf("a rotation caught halfway: serial %v, want the last good, %v", got.SerialNumber, second.Leaf.SerialNumber)
	}
}

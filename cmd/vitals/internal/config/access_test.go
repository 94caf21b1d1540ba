package config_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/probe/probetest"
)

// details: takes its three words, and true and false as they read before
// them: every client, or none.
func TestDetailsWords(t *testing.T) {
	for _, c := range []struct {
		value string
		want  Details
	}{
		{"all", DetailsAll}, {"local", DetailsLocal}, {"none", DetailsNone},
		{"true", DetailsAll}, {"false", DetailsNone}, {`"true"`, DetailsAll}, {`"false"`, DetailsNone},
	} {
		cfg := mustParse(t, y("details: "+c.value, "checks:", "  a: {heartbeat: {ttl: 1s}}"))
		if cfg.Details != c.want {
			t.Errorf("details: %s read as %q, want %q", c.value, cfg.Details, c.want)
		}
	}
}

// A tls: and an auth: whose files load are read as they are given.
func TestTLSAndAuthRead(t *testing.T) {
	dir := t.TempDir()
	ca := probetest.NewCA(t)
	cert, key, token := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "token")
	probetest.WriteKeyPair(t, ca.ServerFor(t, time.Hour, "localhost"), cert, key)
	if err := os.WriteFile(token, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, y(
		"tls: {cert-file: "+cert+", key-file: "+key+", client-ca-file: "+ca.File+"}",
		"auth: {token-file: "+token+"}",
		"checks:",
		"  a: {heartbeat: {ttl: 1s}}",
	))
	if want := (TLS{CertFile: cert, KeyFile: key, ClientCAFile: ca.File}); c.TLS == nil || *c.TLS != want {
		t.Errorf("TLS %+v, want %+v", c.TLS, want)
	}
	if c.Auth.TokenFile != token {
		t.Errorf("auth.token-file %q, want %q", c.Auth.TokenFile, token)
	}
}

// A tls: or an auth: that would not serve is refused where it is wrong.
func TestBadTLSAndAuthSayWhatAndWhere(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	expectRefused(t, []refusal{
		{"a bad details word", y(
			"details: public",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:10: details: want all, local or none (true is all, false none), got "public"`,
		}},
		{"a key without its certificate", y(
			"tls: {key-file: "+empty+"}",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:17: tls.key-file: a key without its certificate: give cert-file too`,
		}},
		{"a certificate without its key", y(
			"tls:",
			"  cert-file: "+empty,
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:2:14: tls.cert-file: a certificate without its key: give key-file too`,
		}},
		{"an empty tls", y(
			"tls: {}",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:6: tls: give cert-file and key-file, the listener's certificate and its key`,
		}},
		{"a missing certificate file", y(
			"tls:",
			"  cert-file: "+missing,
			"  key-file: "+missing,
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:2:14: tls.cert-file: ` + missing + ` with key-file ` + missing + `: open ` + missing + `: no such file or directory`,
		}},
		{"a client CA file of no certificate", y(
			"tls:",
			"  cert-file: "+missing,
			"  key-file: "+missing,
			"  client-ca-file: "+empty,
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:2:14: tls.cert-file: ` + missing + ` with key-file ` + missing + `: open ` + missing + `: no such file or directory`,
			`vitals.yaml:4:19: tls.client-ca-file: ` + empty + ` holds no PEM certificate`,
		}},
		{"an unknown tls field", y(
			"tls: {cert: a.pem, key-file: b.pem}",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:7: tls.cert: unknown field "cert" (want cert-file, client-ca-file, key-file)`,
			`vitals.yaml:1:30: tls.key-file: a key without its certificate: give cert-file too`,
		}},
		{"an auth without its token file", y(
			"auth: {}",
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:7: auth: give token-file, the file of the bearer token`,
		}},
		{"an empty token, a missing one", y(
			"auth: {token-file: "+empty+"}",
			"api: tcp://127.0.0.1:0",
			"api-token-file: "+missing,
			"checks:",
			"  a: {heartbeat: {ttl: 1s}}",
		), []string{
			`vitals.yaml:1:20: auth.token-file: ` + empty + ` is empty`,
			`vitals.yaml:3:17: api-token-file: open ` + missing + `: no such file or directory`,
		}},
	})
}

// Offline, the files of tls: and auth: are not looked for: they are
// mounted where vitals runs.
func TestOfflineTLSAndAuthFilesAreNotRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vitals.yaml")
	if err := os.WriteFile(path, []byte(y(
		"tls: {cert-file: /tls/tls.crt, key-file: /tls/tls.key, client-ca-file: /tls/ca.crt}",
		"auth: {token-file: /secrets/token}",
		"checks:",
		"  a: {heartbeat: {ttl: 1s}}",
	)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, kinds.All, Options{Offline: true}); err != nil {
		t.Errorf("offline: %v", err)
	}
	if _, err := Load(path, kinds.All, Options{}); err == nil {
		t.Error("online: the missing files load")
	}
}

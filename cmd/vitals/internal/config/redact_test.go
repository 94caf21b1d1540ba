package config_test

import (
	"strings"
	"testing"

	. "github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

func TestRedactHidesSecretVariablesAndURLPasswords(t *testing.T) {
	env := map[string]string{"DB_PASSWORD": "hunter2!", "API_TOKEN": "tok-123456", "HOST": "db.internal", "PIN_SECRET": "ab"}
	c, err := Parse("vitals.yaml", []byte(`
checks:
  db:
    tcp: {address: "${HOST}:5432", send: "AUTH ${DB_PASSWORD}\r\n"}
  api:
    http: {url: "https://bot:${API_TOKEN}@api.example.com/", headers: {X-Pin: "${PIN_SECRET}"}}
  web:
    http: {url: "http://admin:literal-pw@web/"}
`), func(k string) (string, bool) { v, ok := env[k]; return v, ok }, kinds.All)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"AUTH hunter2! refused":                 "AUTH xxxxx refused",
		"Get https://bot:tok-123456@api/: 401":  "Get https://bot:xxxxx@api/: 401",
		"token tok-123456 expired":              "token xxxxx expired",
		"dial db.internal:5432 refused":         "dial db.internal:5432 refused",
		"literal-pw was wrong":                  "xxxxx was wrong",
		"GET http://someone:else@other/ failed": "GET http://someone:xxxxx@other/ failed",
		"a short secret ab stays: cab":          "a short secret ab stays: cab",
	} {
		if got := c.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLiteralCredentialsInHeadersAndEnvMappingsAreSecrets(t *testing.T) {
	c, err := Parse("vitals.yaml", []byte(`
checks:
  api:
    http: {url: "http://api/", headers: {Authorization: "Bearer lit-bearer-token", X-Api-Key: lit-api-key, X-Trace: not-a-secret}}
  db:
    exec: {command: [psql, -c, "select 1"], env: {PGPASSWORD: lit-pg-password, PGHOST: db-host}}
service:
  command: [sleep, "60"]
  env: {APP_SECRET: lit-app-secret}
`), func(string) (string, bool) { return "", false }, kinds.All)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"sent Bearer lit-bearer-token":    "sent xxxxx", // the whole value, longest first
		"token lit-bearer-token rejected": "token xxxxx rejected",
		"key lit-api-key unknown":         "key xxxxx unknown",
		"trace not-a-secret":              "trace not-a-secret",
		"password lit-pg-password failed": "password xxxxx failed",
		"host db-host down":               "host db-host down",
		"app lit-app-secret":              "app xxxxx",
	} {
		if got := c.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorsAndURLsKeepTheirSecretsToo(t *testing.T) {
	env := map[string]string{"DB_PASSWORD": "s3cretpw"}
	_, err := Parse("vitals.yaml", []byte(`
checks:
  bad:
    http: {url: "http://u:${DB_PASSWORD}@[::1:80/"}
  bad2:
    tcp: {address: "${DB_PASSWORD}"}
`), func(k string) (string, bool) { v, ok := env[k]; return v, ok }, kinds.All)
	if err == nil || strings.Contains(err.Error(), "s3cretpw") {
		t.Fatalf("errors show the secret:\n%v", err)
	}
	c, err := Parse("vitals.yaml", []byte(`
checks:
  q:
    http: {url: "http://db/?password=querypass1"}
  n:
    tcp: {address: "localhost:4222"}
`), func(string) (string, bool) { return "", false }, kinds.All)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Redact("GET http://db/?password=querypass1 failed"); strings.Contains(got, "querypass1") {
		t.Fatalf("a query password shows: %q", got)
	}
}

// A value under a secret name in a URL's query is hidden however short:
// that of a check's URL as that of a hook's, in whatever quotes them.
func TestAShortSecretNamedQueryValueIsHiddenAsALongOneIs(t *testing.T) {
	c, err := Parse("vitals.yaml", []byte(`
checks:
  api:
    http: {url: "http://api/ready?token=abc"}
hooks:
  - {on: [check-failed], webhook: {url: "https://pager/hook?key=k1&token=tok-long-1"}}
`), func(string) (string, bool) { return "", false }, kinds.All)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		`Get "http://api/ready?token=abc": connection refused`:           `Get "http://api/ready?token=xxxxx": connection refused`,
		`Post "https://pager/hook?key=k1&token=tok-long-1": i/o timeout`: `Post "https://pager/hook?key=xxxxx&token=xxxxx": i/o timeout`,
		"abc and k1 elsewhere stay":                                      "abc and k1 elsewhere stay",
	} {
		if got := c.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

package config

import "testing"

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
`), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
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

package redact

import (
	"slices"
	"testing"
)

func TestAURLsSecretsAreItsPasswordTokenAndSecretNamedQueryValues(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want []string
	}{
		{"http://127.0.0.1:1/?password=hunter22&token=abcd1234", []string{"abcd1234", "hunter22"}},
		{"https://bot:tok-123456@api.example.com/", []string{"tok-123456"}},
		{"postgres://db/app?sslmode=disable&PGPASSWORD=p%40ss+word", []string{"p%40ss+word", "p@ss word"}},
		{"nats://s3cr3ttoken@nats:4222", []string{"s3cr3ttoken"}},
		{"http://user@web/", nil},               // a user name is no secret
		{"http://web/?password=ab", nil},        // too short to hide wherever it appears
		{"http://web/?page=12345&q=hello", nil}, // names that say nothing
		{"db.internal:5432", nil},               // no URL
		{"grpc://h:1/svc?api_secret=xyz-987", []string{"xyz-987"}},
		{"http://[::1:80/?password=hunter22", []string{"hunter22"}}, // no URL, but its error quotes it
		{"http://h/x?api_key=kkkk1234&X-Amz-Signature=5a1b2c3d", []string{"5a1b2c3d", "kkkk1234"}},
		{"http://h/?token=abc%2fdefg", []string{"abc%2Fdefg", "abc%2fdefg", "abc/defg"}}, // as written too: a %2f kept so
	} {
		got := URL(tc.url)
		slices.Sort(got)
		got = slices.Compact(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("URL(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

func TestSecretNamedVariablesAndCredentialHeaders(t *testing.T) {
	got := Environ([]string{"DB_PASSWORD=s3cretpw", "HOME=/root", "GITHUB_TOKEN=ghp_x1y2", "app_secret=shh!", "PIN_SECRET=ab", "EMPTY_TOKEN=", "NOVALUE",
		"API_KEY=apikey123", "GOOGLE_APPLICATION_CREDENTIALS=/etc/gcp.json", "LANG=C.UTF-8"})
	if want := []string{"s3cretpw", "ghp_x1y2", "shh!", "apikey123", "/etc/gcp.json"}; !slices.Equal(got, want) {
		t.Errorf("Environ = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		name, value string
		want        []string
	}{
		{"Authorization", "Bearer abcdefgh", []string{"Bearer abcdefgh", "abcdefgh"}},
		{"X-Api-Key", "k-12345", []string{"k-12345", "k-12345"}},
		{"cookie", "session=zzzz", []string{"session=zzzz", "session=zzzz"}},
		{"Proxy-Authorization", "Basic dXNlcjpwYXNz", []string{"Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"}},
		{"Host", "api.example.com", nil},
		{"Accept", "application/json", nil},
	} {
		if got := Header(tc.name, tc.value); !slices.Equal(got, tc.want) {
			t.Errorf("Header(%q, %q) = %q, want %q", tc.name, tc.value, got, tc.want)
		}
	}
}

func TestRedactHidesEachSecretWholeAndEveryURLPassword(t *testing.T) {
	r := New(append(URL("http://127.0.0.1:1/?password=hunter22&token=abcd1234"),
		append(Header("Authorization", "Bearer abcd1234-long"), "ab", "")...)...)
	for in, want := range map[string]string{
		"GET http://127.0.0.1:1/?password=hunter22&token=abcd1234": "GET http://127.0.0.1:1/?password=xxxxx&token=xxxxx",
		"sent Bearer abcd1234-long":                                "sent xxxxx", // the longest first: no "abcd1234" left over
		"token abcd1234-long refused":                              "token xxxxx refused",
		"GET http://someone:else@other/ failed":                    "GET http://someone:xxxxx@other/ failed",
		"ab and cab stay":                                          "ab and cab stay",
	} {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	// An error that quotes a secret (%q) escapes its quotes and backslashes.
	q := New(`Pa"ss\w0rd`)
	for in, want := range map[string]string{
		`chdir "/srv/Pa\"ss\\w0rd": no such file`: `chdir "/srv/xxxxx": no such file`,
		`password Pa"ss\w0rd refused`:             `password xxxxx refused`,
	} {
		if got := q.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	var none *Redactor
	if got := none.Redact("http://a:pw@h/ hunter22"); got != "http://a:xxxxx@h/ hunter22" {
		t.Errorf("a nil Redactor: %q", got)
	}
}

// A value under a secret name in a URL's query is a secret whatever its
// length: MinSecret keeps a short value of the environment from masking a
// word everywhere, but in ?token=abc the name says what abc is.
func TestASecretNamedQueryValueIsHiddenWhateverItsLength(t *testing.T) {
	var none *Redactor
	for in, want := range map[string]string{
		"GET http://api/?token=abc failed":                  "GET http://api/?token=xxxxx failed",
		`Post "https://hook/x?a=1&Password=1&b=2": refused`: `Post "https://hook/x?a=1&Password=xxxxx&b=2": refused`,
		"http://h/?api%5Fkey=k#top":                         "http://h/?api%5Fkey=xxxxx#top",
		"grpc: {url: grpc://h:1/svc?x-amz-signature=ab}":    "grpc: {url: grpc://h:1/svc?x-amz-signature=xxxxx}", // a flow mapping's brace is no part of it
		"http://h/?page=1&q=abc":                            "http://h/?page=1&q=abc",
		"http://h/?token=&q=1":                              "http://h/?token=&q=1",
		"token=abc, not in a URL":                           "token=abc, not in a URL",
	} {
		if got := none.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// A URL written without // (scheme:user:password@host, an opaque URL to
// net/url) has its password hidden as one written with //.
func TestAURLWrittenWithoutSlashesHasItsPasswordHidden(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want []string
	}{
		{"redis:user:s3cretpw@cache:6379", []string{"s3cretpw"}},
		{"postgres:app:p%40ss@db/app?sslmode=disable", []string{"p%40ss", "p@ss"}},
		{"nats:s3cr3ttoken@nats:4222", []string{"s3cr3ttoken"}},
		{"mailto:someone@example.com", nil},
	} {
		got := URL(tc.url)
		slices.Sort(got)
		got = slices.Compact(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("URL(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
	var none *Redactor
	for in, want := range map[string]string{
		"postgres:user:pw@host":                              "postgres:user:xxxxx@host",
		`target "redis:user:pw@cache:6379": write redis://…`: `target "redis:user:xxxxx@cache:6379": write redis://…`,
		"mailto:someone@example.com at 12:30":                "mailto:someone@example.com at 12:30",
	} {
		if got := none.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// A secret-named query value is hidden whole, whatever it holds but what
// ends a query; what closes the text around the URL stays; a time is no
// URL without //.
func TestAQueryValueIsHiddenWholeAndATimeIsNoURL(t *testing.T) {
	for in, want := range map[string]string{
		"GET /x?token=ab;cd failed":                 "GET /x?token=xxxxx failed",
		"GET /x?token=a,b)c&page=2":                 "GET /x?token=xxxxx&page=2",
		"{url: http://x/?token=abc}":                "{url: http://x/?token=xxxxx}",
		"<a href=\"/x?a=1&amp;access_token=abcd\">": "<a href=\"/x?a=1&amp;access_token=xxxxx\">",
		"ts=2026-12-07T03:49:00Z:warn:user@host":    "ts=2026-12-07T03:49:00Z:warn:user@host",
		"url redis:user:pw@cache:6379":              "url redis:user:xxxxx@cache:6379",
	} {
		if got := New().Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

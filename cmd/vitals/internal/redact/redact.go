// Package redact hides secrets in the text vitals shows: check outputs,
// events, log lines, errors, the one-shot CLI's lines and JSON. The secrets
// are found where they are given — a URL's password or token, a header that
// carries a credential, a variable whose name says it is a secret — and a
// Redactor built from them replaces each wherever it appears. The agent's
// configuration (package config) and the one-shot commands (vitals probe,
// vitals wait) both build theirs here, so that both hide the same things.
package redact

import (
	"cmp"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Mask stands where a secret was, as url.URL.Redacted writes it.
const Mask = "xxxxx"

// MinSecret is the shortest value hidden wherever it appears: a shorter one
// would mask ordinary words in every output (and is no secret anyway).
const MinSecret = 4

// Redactor hides a set of secrets. The zero value, and a nil *Redactor,
// hide only passwords written in URLs.
type Redactor struct {
	secrets []string // longest first, so that a secret that contains another is hidden whole
}

// New returns a Redactor of secrets, the values the functions of this
// package found; those shorter than MinSecret are left out. Each is hidden
// as it is and as an error quotes it (%q: a quote or a backslash in it
// escaped).
func New(secrets ...string) *Redactor {
	kept := slices.DeleteFunc(slices.Clone(secrets), func(s string) bool { return len(s) < MinSecret })
	for _, s := range kept {
		if q := strconv.Quote(s); q[1:len(q)-1] != s {
			kept = append(kept, q[1:len(q)-1])
		}
	}
	slices.SortFunc(kept, func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), cmp.Compare(a, b)) })
	return &Redactor{secrets: slices.Compact(kept)}
}

// With returns a Redactor of r's secrets and o's: what a reloaded file's
// text passes through, since what the file read first may still show
// the old secrets (a check's history) while the new ones appear.
func (r *Redactor) With(o *Redactor) *Redactor {
	var all []string
	if r != nil {
		all = append(all, r.secrets...)
	}
	if o != nil {
		all = append(all, o.secrets...)
	}
	return New(all...)
}

// Redact returns s with every secret, the password of every URL written
// with one (user:password@, after scheme:// or scheme:), and the value of
// every query parameter named like a secret (?token=, see SecretName),
// however short, replaced by Mask.
func (r *Redactor) Redact(s string) string {
	if r != nil {
		for _, secret := range r.secrets {
			s = strings.ReplaceAll(s, secret, Mask)
		}
	}
	s = urlPassword.ReplaceAllString(s, "$1:"+Mask+"@")
	if strings.Contains(s, "=") {
		s = queryParam.ReplaceAllStringFunc(s, func(param string) string {
			key, _, _ := strings.Cut(param[1:], "=")
			name, err := url.QueryUnescape(key)
			if err != nil {
				name = key
			}
			if !SecretName(name) {
				return param
			}
			// What closes a flow mapping or a list around the URL
			// stays: its last characters are not the value's.
			value := param[len("?")+len(key)+len("="):]
			kept := strings.TrimRight(value, ")}],")
			return param[:len(param)-len(value)] + Mask + value[len(kept):]
		})
	}
	return s
}

// urlPassword finds the password of a URL written with one: after
// scheme://user, or after scheme:user in a URL written without // (which
// url.Parse reads as opaque), its scheme at the start of a word (a time
// such as T03:49:00Z:warn:user@host is no URL).
var urlPassword = regexp.MustCompile(`((?:://|(?:^|[\s"'=(<\[{,])[A-Za-z][A-Za-z0-9+.-]*:)[^:/@\s"']+):[^@\s"'/]+@`)

// queryParam finds a query parameter with a value, ?name=value, &name=value
// or ;name=value (&amp;name=value in HTML). The value ends where a URL's
// query does, or at a quote; a brace, a bracket, a parenthesis or a comma
// at its end is taken for what closes the text around the URL (Redact
// keeps them), and one inside it is the value's.
var queryParam = regexp.MustCompile("[?&;][A-Za-z0-9_.~%+-]+=[^&#\\s\"'`<>]+")

// URL returns the secrets that the URL s carries: the password of its
// userinfo, a NATS token (a userinfo with no password, nats:// or tls://),
// the values of its query parameters named like secrets (libpq's
// ?password=, ?token=), each as written and query-escaped; of a URL written
// without // (redis:user:password@host) too. Nil when s is no URL with a
// scheme. Of a URL that does not parse, the query's secrets are
// found all the same: the error that says so quotes it.
func URL(s string) []string {
	u, err := url.Parse(s)
	switch {
	case err != nil && strings.Contains(s, "://"):
		_, query, _ := strings.Cut(s, "?")
		u = &url.URL{RawQuery: query}
	case err != nil || u.Scheme == "":
		return nil
	case u.Opaque != "":
		// Written without // (redis:user:password@host), its userinfo is
		// in what url.Parse leaves opaque.
		if slashed, err := url.Parse(u.Scheme + "://" + u.Opaque); err == nil {
			u.User = slashed.User
		}
	}
	var found []string
	if u.User != nil {
		if pw, set := u.User.Password(); set {
			found = append(found, pw)
		} else if u.Scheme == "nats" || u.Scheme == "tls" {
			found = append(found, u.User.Username())
		}
	}
	for key, values := range u.Query() {
		if SecretName(key) {
			found = append(found, values...)
		}
	}
	var out []string
	for _, secret := range found {
		if len(secret) >= MinSecret {
			out = append(out, secret, url.QueryEscape(secret))
		}
	}
	// As written, too: %2f or + in a token stays so in what quotes the URL.
	for pair := range strings.SplitSeq(u.RawQuery, "&") {
		if key, v, ok := strings.Cut(pair, "="); ok && len(v) >= MinSecret {
			if name, err := url.QueryUnescape(key); err == nil && SecretName(name) {
				out = append(out, v)
			}
		}
	}
	return out
}

// Env returns v, the value of the environment variable name, when the name
// says it is a secret (see SecretName) and v is long enough to hide.
func Env(name, v string) []string {
	if SecretName(name) && len(v) >= MinSecret {
		return []string{v}
	}
	return nil
}

// Environ returns the secrets of an environment, NAME=value lines as
// os.Environ gives them: what a command vitals starts inherits, and may
// print.
func Environ(env []string) []string {
	var out []string
	for _, kv := range env {
		if name, v, ok := strings.Cut(kv, "="); ok {
			out = append(out, Env(name, v)...)
		}
	}
	return out
}

// Header returns the secrets of a request header: its value, whole and its
// last word (the token after "Bearer "), when the name says it carries a
// credential (see SecretHeader).
func Header(name, v string) []string {
	if !SecretHeader(name) {
		return nil
	}
	var out []string
	for _, secret := range []string{v, v[strings.LastIndexByte(v, ' ')+1:]} {
		if len(secret) >= MinSecret {
			out = append(out, secret)
		}
	}
	return out
}

// SecretName reports whether a variable's (or a query parameter's) name says
// its value is a secret: *PASSWORD*, *PASSWD*, *TOKEN*, *SECRET*, *KEY*
// (API_KEY, ?api_key=, AWS_SECRET_ACCESS_KEY), *CREDENTIAL* or *SIGNATURE*
// (X-Amz-Signature), in any case. A name that only looks so (KEYCLOAK_URL)
// has its value hidden too: hiding a harmless value costs a reader little.
func SecretName(name string) bool {
	n := strings.ToUpper(name)
	for _, word := range []string{"PASSWORD", "PASSWD", "TOKEN", "SECRET", "KEY", "CREDENTIAL", "SIGNATURE"} {
		if strings.Contains(n, word) {
			return true
		}
	}
	return false
}

// SecretHeader reports whether a header's name says it carries a
// credential: Authorization, Proxy-Authorization, Cookie, or a name with
// AUTH, KEY, TOKEN, SECRET, PASSWORD or PASSWD in it (X-Api-Key), in any case.
func SecretHeader(name string) bool {
	n := strings.ToUpper(name)
	return SecretName(n) || n == "COOKIE" || strings.Contains(n, "AUTH") || strings.Contains(n, "KEY")
}

// Package target turns what a user types — a URL whose scheme names the kind,
// or a command line, and the flags that go with the kind — into a probe. The
// one-shot commands (vitals probe, vitals wait) share it.
package target

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/probe"
)

// Options are the kinds' options as flags give them. Set records which flags
// the user gave, so that a flag that does not fit a target's kind is an error
// rather than silently ignored.
type Options struct {
	Method      string
	Status      string
	Body        string
	NotBody     string
	Header      []string // "Name: value"
	Insecure    bool
	CAFile      string
	CertFile    string
	KeyFile     string
	ServerName  string
	Send        string // with \r \n \t \\ \xHH escapes
	Expect      []string
	NonEmpty    bool
	Regular     bool
	MaxAge      time.Duration
	Content     string
	Type        string
	MinValidity time.Duration
	Env         []string
	Dir         string

	Set func(flag string) bool // whether the user gave the flag; nil means none
}

// Kinds lists, for each kind flag, the kinds it applies to.
var Kinds = map[string][]string{
	"method": {"http"}, "status": {"http"}, "body": {"http"}, "not-body": {"http"}, "header": {"http"},
	"insecure": {"http", "tls"}, "ca-file": {"http", "tls"}, "cert": {"http", "tls"}, "key": {"http", "tls"},
	"server-name": {"http", "tls"},
	"send":        {"tcp"}, "expect": {"tcp", "dns"},
	"non-empty": {"file"}, "regular": {"file"}, "max-age": {"file"}, "content": {"file"},
	"type":         {"dns"},
	"min-validity": {"tls"},
	"env":          {"exec"}, "dir": {"exec"},
}

// Schemes are the target schemes and the kinds they name.
var Schemes = map[string]string{
	"http": "http", "https": "http", "tcp": "tcp", "file": "file", "dns": "dns", "tls": "tls",
}

// KindOf says which kind a target is, or why it is none.
func KindOf(target string) (string, error) {
	scheme, _, ok := strings.Cut(target, "://")
	if !ok {
		return "", fmt.Errorf("target %q has no scheme: use http://, https://, tcp://, file://, dns://, tls://, or -- COMMAND for exec", target)
	}
	kind, ok := Schemes[strings.ToLower(scheme)]
	if !ok {
		return "", fmt.Errorf("target %q: unknown scheme %q: use http, https, tcp, file, dns or tls (or -- COMMAND for exec)", target, scheme)
	}
	return kind, nil
}

// Unfit returns the flags the user gave that do not apply to kind.
func (o Options) Unfit(kind string) []string {
	var out []string
	for flag, kinds := range Kinds {
		if o.Set != nil && o.Set(flag) && !slices.Contains(kinds, kind) {
			out = append(out, "--"+flag)
		}
	}
	slices.Sort(out)
	return out
}

// Build makes the probe for a URL target.
func Build(target string, o Options) (*probe.Prober, error) {
	kind, err := KindOf(target)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", target, err)
	}
	tlsOptions := probe.TLSOptions{CAFile: o.CAFile, CertFile: o.CertFile, KeyFile: o.KeyFile,
		ServerName: o.ServerName, InsecureSkipVerify: o.Insecure}
	switch kind {
	case "http":
		header, err := parseHeaders(o.Header)
		if err != nil {
			return nil, err
		}
		return probe.HTTP(probe.HTTPSpec{URL: target, Method: o.Method, Header: header, Status: o.Status,
			Body: o.Body, NotBody: o.NotBody, TLS: tlsOptions})
	case "tcp":
		if err := hostPortOnly(target, u); err != nil {
			return nil, err
		}
		send, err := unescape("--send", o.Send)
		if err != nil {
			return nil, err
		}
		var expect string
		switch len(o.Expect) {
		case 0:
		case 1:
			if expect, err = unescape("--expect", o.Expect[0]); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("--expect: a tcp target takes one, got %d", len(o.Expect))
		}
		return probe.TCP(probe.TCPSpec{Address: u.Host, Send: send, Expect: expect})
	case "tls":
		if err := hostPortOnly(target, u); err != nil {
			return nil, err
		}
		return probe.TLS(probe.TLSSpec{Address: u.Host, MinValidity: o.MinValidity, TLS: tlsOptions})
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("target %q: a file URL names a local path: file:///path (three slashes)", target)
		}
		if u.Path == "" {
			return nil, fmt.Errorf("target %q has no path", target)
		}
		return probe.File(probe.FileSpec{Path: u.Path, NonEmpty: o.NonEmpty, Regular: o.Regular,
			MaxAge: o.MaxAge, Content: o.Content})
	case "dns":
		// RFC 4501: dns://[server[:port]/]name[?type=TYPE]
		name, server := u.Host, ""
		if p := strings.TrimPrefix(u.Path, "/"); p != "" {
			name, server = p, u.Host
		}
		typ := o.Type
		if q := u.Query().Get("type"); q != "" {
			if typ != "" && !strings.EqualFold(typ, q) {
				return nil, fmt.Errorf("target %q asks for type %s, --type for %s", target, q, typ)
			}
			typ = q
		}
		return probe.DNS(probe.DNSSpec{Name: name, Type: strings.ToUpper(typ), Expect: o.Expect, Server: server})
	}
	return nil, fmt.Errorf("target %q: no kind %q", target, kind)
}

// BuildExec makes the probe for a command line.
func BuildExec(argv []string, o Options) (*probe.Prober, error) {
	return probe.Exec(probe.ExecSpec{Command: argv, Env: o.Env, Dir: o.Dir})
}

func hostPortOnly(target string, u *url.URL) error {
	if u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return fmt.Errorf("target %q: want %s://HOST:PORT", target, u.Scheme)
	}
	return nil
}

func parseHeaders(lines []string) (http.Header, error) {
	h := http.Header{}
	for _, l := range lines {
		name, value, ok := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("--header %q: want \"Name: value\"", l)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

// unescape reads \r, \n, \t, \\ and \xHH in s, so that a protocol's bytes can
// be typed on a command line: --send 'PING\r\n'.
func unescape(flag, s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	out, err := strconv.Unquote(`"` + strings.ReplaceAll(s, `"`, `\"`) + `"`)
	if err != nil {
		return "", fmt.Errorf(`%s %q: a bad escape: use \r, \n, \t, \\ or \xHH`, flag, s)
	}
	return out, nil
}

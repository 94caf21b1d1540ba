package kinds

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/redact"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// HTTP is an HTTP request whose answer must have a status that passes.
var HTTP = define(Kind{
	Name:          "http",
	Summary:       "An HTTP request whose status passes (200-399 by default), with optional body patterns.",
	Example:       "{url: http://localhost:8080/healthz}",
	ComponentType: health.ComponentTypeComponent, // the workload's own endpoint, most often
	CLI:           httpCLI,
	Import:        &Import{Kubelet: "httpGet", Pebble: "http", Block: httpFromPeer},
}, block[probe.HTTPSpec]{
	fields: func(s *probe.HTTPSpec) []config.Field {
		return append([]config.Field{
			{Key: "url", Value: config.String(&s.URL), Required: true, Doc: "Required: http:// or https://."},
			{Key: "method", Value: config.String(&s.Method), Default: "GET", Doc: "In capitals, as HTTP methods are."},
			{Key: "status", Value: config.String(&s.Status), Default: probe.DefaultStatus,
				Doc: "The statuses that pass: codes and ranges, such as 200,204,300-399. The default is the kubelet's rule."},
			{Key: "headers", Value: config.Headers((*map[string][]string)(&s.Header)),
				Doc: "Sent with the request; a Host header sets the virtual host. Their values are secrets, never printed."},
			{Key: "body", Value: config.String(&s.Body),
				Doc: "A regular expression the body (its first 10 KiB) must match."},
			{Key: "not-body", Value: config.String(&s.NotBody),
				Doc: "A regular expression the body (its first 10 KiB) must not match."},
		}, tlsFields(&s.TLS)...)
	},
	tls: func(s *probe.HTTPSpec) *probe.TLSOptions { return &s.TLS },
	build: func(_ string, s probe.HTTPSpec, _ Env) (health.Checker, error) {
		if s.URL == "" {
			return nil, errors.New("url is required")
		}
		return probe.HTTP(s)
	},
})

// httpFromPeer is the block of a peer's HTTP check: its URL, the statuses
// that pass when they are not vitals's, its headers, and insecure when the
// peer accepts any certificate. It is built as the file's will be, so that
// a URL or a header the checker would not take fails the import.
func httpFromPeer(p Peer) ([]Pair, error) {
	s := probe.HTTPSpec{URL: p.URL, Status: p.Status, Header: http.Header{}, TLS: probe.TLSOptions{InsecureSkipVerify: p.Insecure}}
	block := []Pair{{Key: "url", Value: p.URL}}
	if p.Status != "" {
		block = append(block, Pair{Key: "status", Value: p.Status, Note: p.StatusNote})
	}
	if len(p.Headers) > 0 {
		block = append(block, Pair{Key: "headers", Value: p.Headers})
		for _, h := range p.Headers {
			s.Header[h.Name] = append(s.Header[h.Name], h.Values...)
		}
	}
	if p.Insecure {
		block = append(block, Pair{Key: "insecure", Value: true, Note: p.InsecureNote})
	}
	if _, err := probe.HTTP(s); err != nil {
		return nil, err
	}
	return block, nil
}

// httpArgs are what an http target is built from: the spec, and the
// headers as --header gives them.
type httpArgs struct {
	spec    probe.HTTPSpec
	headers []string
}

var httpCLI = takes(CLI{
	Schemes: []string{"http", "https"}, Target: "http://HOST[:PORT]/PATH, https://…",
	Help:    "an HTTP answer with an expected status (default " + probe.DefaultStatus + ")",
	Example: "http://localhost:8080/healthz",
}, targets[httpArgs]{
	flags: func(a *httpArgs) []Flag {
		return append([]Flag{
			{Name: "method", Value: stringFlag(&a.spec.Method), Usage: "request method (default GET)"},
			{Name: "status", Value: stringFlag(&a.spec.Status), Usage: "statuses that pass, as codes and ranges (default " + probe.DefaultStatus + ")"},
			{Name: "body", Value: stringFlag(&a.spec.Body), Usage: "a regular expression the body must match (first 10 KiB)"},
			{Name: "not-body", Value: stringFlag(&a.spec.NotBody), Usage: "a regular expression the body must not match"},
			{Name: "header", Value: stringsFlag(&a.headers), Usage: `a request header "Name: value" (repeatable; Host sets the virtual host)`,
				Secrets: func(h string) []string {
					name, value, _ := strings.Cut(h, ":")
					return redact.Header(strings.TrimSpace(name), strings.TrimSpace(value))
				}},
		}, tlsFlags(&a.spec.TLS)...)
	},
	url: func(target string, a httpArgs) (*probe.Prober, error) {
		if _, err := parseTarget(target); err != nil {
			return nil, err
		}
		header, err := parseHeaders(a.headers)
		if err != nil {
			return nil, err
		}
		a.spec.URL, a.spec.Header = target, header
		return probe.HTTP(a.spec)
	},
})

// parseHeaders reads the "Name: value" lines of --header.
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

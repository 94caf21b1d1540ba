package kinds

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/jsonbody"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/yamlnode"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// HTTP is an HTTP request whose answer must have a status that passes,
// and what else its block expects of the answer.
var HTTP = define(Kind{
	Name:          "http",
	Summary:       "An HTTP request whose answer passes: its status (200-399 by default), and the headers, body patterns and JSON values it expects.",
	Example:       "{url: http://localhost:8080/healthz}",
	ComponentType: health.ComponentTypeComponent, // the workload's own endpoint, most often
	CLI:           httpCLI,
	Import:        &Import{Kubelet: "httpGet", Pebble: "http", Block: httpFromPeer},
}, block[HTTPSpec]{
	fields: func(s *HTTPSpec) []config.Field {
		fields := []config.Field{
			{Key: "url", Value: config.String(&s.URL), Required: true, Doc: "Required: http:// or https://."},
			{Key: "method", Value: config.String(&s.Method), Default: "GET", Doc: "In capitals, as HTTP methods are."},
			{Key: "status", Value: config.String(&s.Status), Default: probe.DefaultStatus,
				Doc: "The statuses that pass: codes and ranges, such as 200,204,300-399. The default is the kubelet's rule."},
			{Key: "max-duration", Value: config.Duration(&s.MaxDuration),
				Doc: "A response time that fails the check when the answer, its body read, takes longer, saying how long it took: such as 300ms, under the check's timeout. By default none."},
		}
		fields = append(fields, requestFields(&s.HTTPSpec)...)
		fields = append(fields, []config.Field{
			{Key: "request-body", Value: config.String(&s.RequestBody),
				Doc: "Sent as the request's content, never shown: give method (POST) and a Content-Type header with it. By default none."},
			{Key: "follow-redirects", Value: followRedirects(&s.NoFollowRedirects), Default: "true",
				Doc: "false makes a redirect the answer, so that status can expect 302 and response-headers its Location. By default redirects to the same host are followed (at most 10), and one to another host is the answer, as in the kubelet."},
			{Key: "body", Value: pattern(&s.Body),
				Doc: "A regular expression the answer's body (its first 10 KiB) must match."},
			{Key: "not-body", Value: pattern(&s.NotBody),
				Doc: "A regular expression the answer's body (its first 10 KiB) must not match."},
			{Key: "response-headers", Value: responseHeaders(&s.ResponseHeader),
				Doc: `Headers the answer must have, each with a regular expression (RE2, unanchored) that one of its values must match: "" for any value, a list for several. A failure names the header, never its value.`},
			{Key: "json", Value: jsonExpects(&s.JSON),
				Doc: "JSONPath queries (RFC 9535), such as $.status, each with a regular expression that every value it selects must match whole, as text (UP is UP, not BACKUP), or a comparison that every value, a number, must meet: \"< 100\", \">= 0.5\" (the metric kind's comparisons). A query that selects nothing fails. The body must be one JSON value of at most 10 KiB."},
		}...)
		return append(fields, tlsFields(&s.TLS)...)
	},
	tls:   func(s *HTTPSpec) *probe.TLSOptions { return &s.TLS },
	token: func(s *HTTPSpec) *string { return &s.BearerTokenFile },
	timing: func(s HTTPSpec, _, timeout time.Duration) error {
		if s.MaxDuration >= timeout {
			return config.FieldError("max-duration", fmt.Errorf("%v is not under the check's timeout %v, which ends a run first: make it shorter, or the timeout longer", s.MaxDuration, timeout))
		}
		return nil
	},
	build: func(_ string, s HTTPSpec, _ Env) (health.Checker, error) {
		if s.URL == "" {
			return nil, errors.New("url is required")
		}
		return s.prober()
	},
})

// HTTPSpec is an http check's block: the probe's spec, and the assertions on
// the JSON of its answer, which the probe takes as its CheckBody.
type HTTPSpec struct {
	probe.HTTPSpec
	// JSON are the json: assertions, in the file's order. Default none.
	JSON []jsonbody.Expect
}

// prober builds the check of s.
func (s HTTPSpec) prober() (*probe.Prober, error) {
	if len(s.JSON) > 0 {
		if s.Method == http.MethodHead {
			return nil, errors.New("json with method HEAD: a HEAD answer has no body to judge")
		}
		check, err := jsonbody.New(s.JSON)
		if err != nil {
			return nil, err
		}
		s.CheckBody = check
	}
	return probe.HTTP(s.HTTPSpec)
}

// pattern reads a regular expression (RE2), compiled to say what is wrong
// with it at the field.
func pattern(dst *string) config.Value {
	v := config.String(dst)
	read := v.Read
	v.Read = func(d *config.Decoder, n ast.Node, path string) {
		mark := d.Failures()
		read(d, n, path)
		if d.Failures() != mark {
			return
		}
		if _, err := regexp.Compile(*dst); err != nil {
			d.Errorf(n, path, "pattern %q: %v", *dst, err)
		}
	}
	return v
}

// followRedirects reads follow-redirects, whose default is true, into its
// opposite, HTTPSpec.NoFollowRedirects, whose default is false.
func followRedirects(no *bool) config.Value {
	v := config.Bool(new(bool))
	v.Read = func(d *config.Decoder, n ast.Node, path string) {
		follow := true
		config.Bool(&follow).Read(d, n, path)
		*no = !follow
	}
	return v
}

// responseHeaders reads response-headers as headers are read (names that
// are tokens, a value or a list of them), each value a regular expression
// compiled to say what is wrong with it at the header.
func responseHeaders(dst *http.Header) config.Value {
	v := config.Headers((*map[string][]string)(dst))
	read := v.Read
	v.Type = "mapping of names to patterns"
	v.Read = func(d *config.Decoder, n ast.Node, path string) {
		read(d, n, path)
		m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
		if !ok {
			return // read said so
		}
		for _, kv := range m.Values {
			name := yamlnode.KeyName(kv.Key)
			for _, expr := range (*dst)[name] {
				if _, err := regexp.Compile(expr); err != nil {
					d.Errorf(kv.Value, path+"."+name, "pattern %q: %v", expr, err)
				}
			}
			if len((*dst)[name]) == 0 {
				d.Errorf(kv.Value, path+"."+name, `no pattern: "" for any value`)
			}
		}
	}
	return v
}

// jsonExpects reads json: a mapping of JSONPath queries to the patterns
// their values must match, in the file's order, with what is wrong with a
// query said at the query and with a pattern at the pattern. A number is
// the pattern as the file writes it (1.50, not 1.5).
func jsonExpects(dst *[]jsonbody.Expect) config.Value {
	want := config.String(new(string))
	return config.Value{Type: "mapping of JSONPath queries to patterns", Read: func(d *config.Decoder, n ast.Node, path string) {
		m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
		if !ok {
			d.Errorf(n, path, "want a mapping of JSONPath queries to patterns, such as {$.status: UP}, got %s", yamlnode.Describe(n))
			return
		}
		var out []jsonbody.Expect
		for _, kv := range m.Values {
			query := yamlnode.KeyName(kv.Key)
			at := path + "." + query
			if _, err := jsonbody.ParseQuery(query); err != nil {
				d.Errorf(kv.Key, at, "%v", err)
				continue
			}
			var w string
			switch v := yamlnode.Unwrap(kv.Value).(type) {
			case *ast.IntegerNode, *ast.FloatNode:
				w = v.GetToken().Value
			default:
				mark := d.Failures()
				config.String(&w).Read(d, kv.Value, at)
				if d.Failures() != mark {
					continue
				}
			}
			if _, err := jsonbody.ParseWant(w); err != nil {
				d.Errorf(kv.Value, at, "%v", err)
				continue
			}
			out = append(out, jsonbody.Expect{Query: query, Want: w})
		}
		*dst = out
	}, Schema: config.Schema{"type": "object", "propertyNames": config.Schema{"type": "string", "pattern": `^\$`},
		"additionalProperties": want.Schema}}
}

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
// flags that read into it through a parse.
type httpArgs struct {
	spec            probe.HTTPSpec
	request         requestArgs
	responseHeaders []string // --response-header "Name: pattern"
	json            []string // --json QUERY=PATTERN
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
			{Name: "max-duration", Value: durationFlag(&a.spec.MaxDuration), Usage: "an answer slower than this fails, saying how slow (such as 300ms)"},
			{Name: "body", Value: stringFlag(&a.spec.Body), Usage: "a regular expression the body must match (first 10 KiB)"},
			{Name: "not-body", Value: stringFlag(&a.spec.NotBody), Usage: "a regular expression the body must not match"},
			{Name: "request-body", Value: stringFlag(&a.spec.RequestBody), Usage: "the request's content (with --method POST and a Content-Type --header)"},
			{Name: "no-follow-redirects", Value: boolFlag(&a.spec.NoFollowRedirects), Usage: "a redirect is the answer (by default same-host redirects are followed)"},
			{Name: "response-header", Value: stringsFlag(&a.responseHeaders), Usage: `a header the answer must have, "Name: regular expression" (repeatable)`},
			{Name: "json", Value: stringsFlag(&a.json), Usage: "QUERY=PATTERN: every value the JSONPath query selects matches the pattern whole, as $.status=UP, or meets a comparison, as '$.queue.depth=< 100' (repeatable)"},
		}, requestFlags(&a.request)...)
	},
	url: func(target string, a httpArgs) (*probe.Prober, error) {
		if _, err := parseTarget(target); err != nil {
			return nil, err
		}
		s := HTTPSpec{HTTPSpec: a.spec}
		if err := a.request.apply(&s.HTTPSpec); err != nil {
			return nil, err
		}
		var err error
		if len(a.responseHeaders) > 0 {
			if s.ResponseHeader, err = parseHeaders("response-header", "regular expression", a.responseHeaders); err != nil {
				return nil, err
			}
		}
		for _, j := range a.json {
			e, ok := jsonbody.Cut(j)
			if !ok {
				return nil, fmt.Errorf("--json %q: want QUERY=PATTERN, the query a JSONPath query such as $.status (--json '$.status=UP')", j)
			}
			s.JSON = append(s.JSON, e)
		}
		s.URL = target
		return s.prober()
	},
})

package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/version"
)

// HTTPSpec is an HTTP check: a request whose answer must have an expected
// status and, optionally, a body that matches.
type HTTPSpec struct {
	// URL is http:// or https://. Required.
	URL string
	// Method is upper case, as HTTP methods are. Default GET.
	Method string
	// Header is sent with the request. Names are tokens in any case
	// ("user-agent" is User-Agent), and values have no control character
	// but the tab. A Host header sets the virtual host, and the name the
	// certificate is verified against unless TLS.ServerName is set. A header
	// given with an empty value removes the default of that name
	// (User-Agent, Accept), as in the kubelet. Default none.
	Header http.Header
	// Status lists the statuses that pass: codes and ranges, such as
	// "200,204,300-399". Default DefaultStatus, 200-399, the kubelet's rule.
	Status string
	// RequestBody is sent as the request's content, with its length; its
	// Content-Type is Header's to say. It is never shown. Default none.
	RequestBody string
	// NoFollowRedirects makes a redirect the answer, whatever its host, so
	// that Status can expect a 302 and ResponseHeader its Location. Default
	// false: redirects to the same host are followed, at most 10, and a
	// redirect to another host is the answer, as in the kubelet.
	NoFollowRedirects bool
	// Body is a regular expression the body must match, and NotBody one it
	// must not. Only the first 10 KiB of a body is read. Neither goes with
	// method HEAD, whose answer has no body. Default none.
	Body, NotBody string
	// ResponseHeader names headers the answer must have, each with regular
	// expressions (RE2, unanchored: ^…$ for a whole value), each of which
	// must match one of the header's values. Names are tokens in any case.
	// A failure names the header, never its values: they may hold secrets
	// (Set-Cookie). Default none.
	ResponseHeader http.Header
	// BearerTokenFile names a file whose content, without the white space
	// around it, is sent as "Authorization: Bearer TOKEN". It is read when
	// the probe is built, to fail then if it cannot be, and again at every
	// run, so that a token that is rotated in place (a Kubernetes service
	// account's, /var/run/secrets/kubernetes.io/serviceaccount/token) is
	// the one sent. It goes with no Authorization header. Default none.
	BearerTokenFile string
	// MaxDuration fails a run whose answer took longer to come, its body
	// read, saying how long it took: a bound on the response time, such as
	// 300*time.Millisecond, shorter than the check's timeout (which ends
	// the run). It is judged after the status. Default 0: none.
	MaxDuration time.Duration
	// CheckBody, when set, judges the whole body once the status, the
	// response headers and the patterns have passed: its error fails the
	// run, after "HTTP 200: ". A body longer than 10 KiB fails the run
	// without it, as it would judge a part; with method HEAD, whose answer
	// has no body, the spec is refused. It may be called from several
	// goroutines at once. The root module has no JSON query language:
	// vitals's json: assertions (JSONPath, RFC 9535) come in through it.
	// Default none.
	CheckBody func(body []byte) error
	// TLS says how an https server is verified.
	TLS TLSOptions
}

const (
	// maxBody caps what is read of a body: a health answer is small, and a
	// probe must not download a page. The kubelet reads 10 KiB too.
	maxBody = 10 << 10
	// maxRedirects is how many same-host redirects are followed, as in the
	// kubelet and in Go's client.
	maxRedirects = 10
)

// HTTP builds an HTTP probe. The request goes to the URL directly, never
// through a proxy from the environment, on a fresh connection each run
// (keep-alive off, so a probe sees what a new client sees), with
// User-Agent vitals/<version> and Accept */*. Redirects are followed to the
// same host only, at most 10; a redirect elsewhere is the answer, and a 3xx
// passes with the default status set, as in the kubelet. With
// NoFollowRedirects every redirect is the answer.
//
// The answer is judged in this order, and the first failure is the run's:
// the status, the time it took (MaxDuration), the response headers (every
// one that is missing or does not match is named), the body patterns, then
// CheckBody.
//
// A failure says why: Go's error for a request that got no answer (without
// the `Get "URL": ` the kubelet's output starts with), "HTTP probe
// failed with statuscode: 503" (the kubelet's words) for a status outside the
// set, "HTTP 200 in 412ms: slower than 300ms" for an answer slower than
// MaxDuration, "HTTP 302: header Location does not match \"^/login\"" for a
// response header, and the pattern for a body that does not match. The body
// itself is never shown, nor a header's value: they may hold secrets. A
// redirect to another host says where it
// leads: "HTTP probe failed with statuscode: 302 (a redirect to
// login.example.com, not followed)". The observed value is the latency in
// milliseconds.
func HTTP(s HTTPSpec) (*Prober, error) {
	req, err := NewHTTPRequest("http", s)
	if err != nil {
		return nil, err
	}
	status := s.Status
	if status == "" {
		status = DefaultStatus
	}
	statuses, err := ParseStatusSet(status)
	if err != nil {
		return nil, Invalid("http", "%w", err)
	}
	body, err := compile("body", s.Body)
	if err != nil {
		return nil, Invalid("http", "%w", err)
	}
	notBody, err := compile("not-body", s.NotBody)
	if err != nil {
		return nil, Invalid("http", "%w", err)
	}
	if req.method == http.MethodHead {
		for _, p := range []struct{ what, expr string }{{"body", s.Body}, {"not-body", s.NotBody}} {
			if p.expr != "" {
				return nil, Invalid("http", "%s pattern %q with method HEAD: a HEAD answer has no body to match", p.what, p.expr)
			}
		}
		if s.CheckBody != nil {
			return nil, Invalid("http", "a body check with method HEAD: a HEAD answer has no body to judge")
		}
	}
	if s.MaxDuration < 0 {
		return nil, Invalid("http", "max duration %v is negative", s.MaxDuration)
	}
	responseHeader, err := responseHeaderPatterns(s.ResponseHeader)
	if err != nil {
		return nil, Invalid("http", "%w", err)
	}
	h := &httpProbe{req: req, statuses: statuses, maxDuration: s.MaxDuration, responseHeader: responseHeader,
		body: body, notBody: notBody, checkBody: s.CheckBody}
	return &Prober{kind: "http", target: req.String(), measure: h.measure}, nil
}

// HTTPRequest is the request of an HTTP check, built from the request
// fields of an HTTPSpec (URL, Method, Header, BearerTokenFile, RequestBody,
// NoFollowRedirects, TLS) as HTTP sends it: straight to the URL, never
// through a proxy, on a fresh connection each time, with vitals's
// User-Agent, following redirects to the same host only. It is for a kind
// that judges an answer of its own, such as vitals's metric kind, which
// reads a Prometheus exposition: its requests are then an http check's,
// field for field. Safe for concurrent use.
type HTTPRequest struct {
	method, url, host string
	header            http.Header
	requestBody       string
	tokenFile         string
	client            *http.Client
	target            string
}

// NewHTTPRequest checks the request fields of s and builds the request that
// HTTP sends; the fields that judge the answer (Status, Body, ...) are not
// looked at. Its errors are a *SpecError of kind, the kind the request is
// for (http, or the kind that reads the answer).
func NewHTTPRequest(kind string, s HTTPSpec) (*HTTPRequest, error) {
	u, err := url.Parse(s.URL)
	switch {
	case err != nil:
		return nil, Invalid(kind, "URL %q: %w", s.URL, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, Invalid(kind, "URL %q: scheme must be http or https", s.URL)
	case u.Host == "":
		return nil, Invalid(kind, "URL %q has no host", s.URL)
	case u.Scheme == "http" && !s.TLS.isZero():
		return nil, Invalid(kind, "URL %q: TLS options need an https URL", s.URL)
	}
	method := s.Method
	if method == "" {
		method = http.MethodGet
	}
	if !validMethod(method) {
		if upper := strings.ToUpper(method); validMethod(upper) {
			return nil, Invalid(kind, "method %q is not an HTTP method (methods are upper case: %s)", method, upper)
		}
		return nil, Invalid(kind, "method %q is not an HTTP method", method)
	}
	header, err := requestHeader(s.Header)
	if err != nil {
		return nil, Invalid(kind, "%w", err)
	}
	if s.BearerTokenFile != "" {
		if _, given := header["Authorization"]; given {
			return nil, Invalid(kind, "an Authorization header and a bearer token file: give one")
		}
		if _, err := readToken(s.BearerTokenFile); err != nil {
			return nil, Invalid(kind, "%w", err)
		}
	}
	host := header.Get("Host")
	header.Del("Host")
	tlsConfig, err := s.TLS.Config()
	if err != nil {
		return nil, Invalid(kind, "%w", err)
	}
	if tlsConfig.ServerName == "" && host != "" {
		// The certificate is the virtual host's, as for a browser that asks
		// for that name.
		tlsConfig.ServerName = hostOnly(host)
	}
	transport := &http.Transport{
		Proxy:               nil, // a probe checks the target, not a proxy in the environment
		DialContext:         (&net.Dialer{}).DialContext,
		TLSClientConfig:     tlsConfig,
		DisableKeepAlives:   true,
		DisableCompression:  true, // the kubelet's too: the body is read as sent
		TLSHandshakeTimeout: 0,    // the context's deadline bounds every phase
	}
	client := &http.Client{Transport: transport, CheckRedirect: sameHostRedirects}
	if s.NoFollowRedirects {
		client.CheckRedirect = noRedirects
	}
	return &HTTPRequest{method: method, url: u.String(), host: host, header: header, requestBody: s.RequestBody,
		tokenFile: s.BearerTokenFile, client: client, target: method + " " + u.Redacted()}, nil
}

// String says what the request asks for, as in `GET http://localhost:8080/`,
// with the URL's password hidden.
func (r *HTTPRequest) String() string { return r.target }

// Do sends the request and returns the answer, whose body the caller reads
// and closes. An error is Go's, without the `Get "URL": ` that the caller
// knows already; a bearer token file that cannot be read fails it.
func (r *HTTPRequest) Do(ctx context.Context) (*http.Response, error) {
	var content io.Reader
	if r.requestBody != "" {
		content = strings.NewReader(r.requestBody) // with its length, and again for a 307 or 308
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, content)
	if err != nil {
		return nil, err
	}
	req.Header = r.header.Clone()
	req.Host = r.host
	if r.tokenFile != "" {
		token, err := readToken(r.tokenFile)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := r.client.Do(req)
	if urlErr, ok := errors.AsType[*url.Error](err); ok {
		err = urlErr.Err // the target is known: keep what went wrong with it
	}
	return res, err
}

// maxToken caps what is read of a bearer token file: a Kubernetes service
// account's token is about 1 KiB, and a file much larger is not a token.
const maxToken = 16 << 10

// readToken reads a bearer token from its file: the content without the
// white space around it, which must be one line and not empty.
func readToken(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("bearer token file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxToken+1))
	switch {
	case err != nil:
		return "", fmt.Errorf("bearer token file %s: %w", file, err)
	case len(b) > maxToken:
		return "", fmt.Errorf("bearer token file %s is larger than %d KiB: is it a token?", file, maxToken>>10)
	}
	token := strings.TrimSpace(string(b))
	switch {
	case token == "":
		return "", fmt.Errorf("bearer token file %s is empty", file)
	case strings.ContainsFunc(token, isControl):
		return "", fmt.Errorf("bearer token file %s holds more than one line, or a control character", file)
	}
	return token, nil
}

// requestHeader is the spec's header checked, with canonical names (so that
// "user-agent" is User-Agent and "host" is Host), and with the defaults.
func requestHeader(spec http.Header) (http.Header, error) {
	header := http.Header{}
	for _, name := range slices.Sorted(maps.Keys(spec)) {
		if !validHeaderName(name) {
			return nil, fmt.Errorf("header %q: the name is not a token", name)
		}
		for _, v := range spec[name] {
			if strings.ContainsFunc(v, isControl) {
				return nil, fmt.Errorf("header %q: the value has a control character", name)
			}
		}
		key := http.CanonicalHeaderKey(name)
		header[key] = append(header[key], spec[name]...)
	}
	defaultHeader(header, "User-Agent", "vitals/"+version.Version)
	defaultHeader(header, "Accept", "*/*")
	return header, nil
}

// headerPattern is a response header the answer must have, and the
// patterns one of its values must match, each.
type headerPattern struct {
	name     string // canonical
	patterns []*regexp.Regexp
}

// responseHeaderPatterns compiles the spec's ResponseHeader, by canonical
// name in order, a name given in two cases having the patterns of both.
func responseHeaderPatterns(spec http.Header) ([]headerPattern, error) {
	byName := map[string][]string{}
	for name, patterns := range spec {
		if !validHeaderName(name) {
			return nil, fmt.Errorf("response header %q: the name is not a token", name)
		}
		if len(patterns) == 0 {
			return nil, fmt.Errorf("response header %q: no pattern (\"\" for any value)", name)
		}
		key := http.CanonicalHeaderKey(name)
		byName[key] = append(byName[key], patterns...)
	}
	var out []headerPattern
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		h := headerPattern{name: name}
		for _, expr := range byName[name] {
			re, err := regexp.Compile(expr)
			if err != nil {
				return nil, fmt.Errorf("response header %s pattern %q: %w", name, expr, err)
			}
			h.patterns = append(h.patterns, re)
		}
		out = append(out, h)
	}
	return out, nil
}

// missingHeaders says which of want the answer's header h lacks, or has
// with no value a pattern matches: "Location is missing", "Location does
// not match \"^/login\"", joined by "; "; "" when none.
func missingHeaders(h http.Header, want []headerPattern) string {
	var wrong []string
	for _, w := range want {
		values := h.Values(w.name)
		if len(values) == 0 {
			wrong = append(wrong, "header "+w.name+" is missing")
			continue
		}
		for _, re := range w.patterns {
			if !slices.ContainsFunc(values, re.MatchString) {
				wrong = append(wrong, fmt.Sprintf("header %s does not match %q", w.name, re.String()))
			}
		}
	}
	return strings.Join(wrong, "; ")
}

// hostOnly is the host of a Host header, without its port or an IPv6
// address's brackets.
func hostOnly(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

type httpProbe struct {
	req            *HTTPRequest
	statuses       StatusSet
	maxDuration    time.Duration
	responseHeader []headerPattern
	body, notBody  *regexp.Regexp
	checkBody      func([]byte) error
}

func (h *httpProbe) measure(ctx context.Context) (health.Observation, error) {
	start := time.Now()
	res, err := h.req.Do(ctx)
	if err != nil {
		return health.Observation{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody+1)) // one more: a body that was cut
	cut := len(body) > maxBody
	body = body[:min(len(body), maxBody)]
	took := time.Since(start)
	obs := latency(took)
	obs.Message = fmt.Sprintf("HTTP %d in %v", res.StatusCode, took.Round(time.Microsecond))
	note := ""
	if away := redirectedAway(res); away != "" {
		note = " (a redirect to " + away + ", not followed)"
		obs.Message += note
	}
	switch {
	case !h.statuses.Contains(res.StatusCode):
		return obs, fmt.Errorf("HTTP probe failed with statuscode: %d%s", res.StatusCode, note)
	case err != nil:
		return obs, fmt.Errorf("HTTP %d: read body: %w", res.StatusCode, err)
	case h.maxDuration > 0 && took > h.maxDuration:
		shown := took.Round(time.Millisecond)
		if shown <= h.maxDuration { // 300.4ms is not "300ms: slower than 300ms"
			shown = took.Round(time.Microsecond)
		}
		return obs, fmt.Errorf("HTTP %d in %v: slower than %v", res.StatusCode, shown, h.maxDuration)
	}
	if wrong := missingHeaders(res.Header, h.responseHeader); wrong != "" {
		return obs, fmt.Errorf("HTTP %d: %s", res.StatusCode, wrong)
	}
	switch {
	case h.body != nil && !h.body.Match(body):
		return obs, fmt.Errorf("HTTP %d: body does not match %q", res.StatusCode, h.body.String())
	case h.notBody != nil && h.notBody.Match(body):
		return obs, fmt.Errorf("HTTP %d: body matches %q", res.StatusCode, h.notBody.String())
	case h.checkBody == nil:
	case cut:
		return obs, fmt.Errorf("HTTP %d: the body is longer than %d KiB, all that is read of one: too long to judge whole", res.StatusCode, maxBody>>10)
	default:
		if err := h.checkBody(body); err != nil {
			return obs, fmt.Errorf("HTTP %d: %w", res.StatusCode, err)
		}
	}
	return obs, nil
}

// redirectedAway is the host that res, a redirect that was not followed,
// leads to, or "" when res is not a redirect to another host.
func redirectedAway(res *http.Response) string {
	if res.StatusCode < 300 || res.StatusCode > 399 || res.StatusCode == http.StatusNotModified {
		return ""
	}
	loc, err := res.Location() // resolved against the request's URL
	if err != nil || sameHost(loc, res.Request.URL) {
		return ""
	}
	return loc.Hostname()
}

// sameHostRedirects follows redirects to the same host, at most maxRedirects,
// and answers with a redirect to another host, as the kubelet does.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if !sameHost(req.URL, via[0].URL) {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// noRedirects makes every redirect the answer (HTTPSpec.NoFollowRedirects).
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// defaultHeader sets a header the spec does not set, and drops one the spec
// sets to "" (which asks for no such header). An empty User-Agent stays, as
// that is how Go's client is told to send none.
func defaultHeader(h http.Header, name, value string) {
	v, set := h[http.CanonicalHeaderKey(name)]
	switch {
	case !set:
		h.Set(name, value)
	case len(v) == 1 && v[0] == "" && name != "User-Agent":
		h.Del(name)
	}
}

// sameHost reports whether two URLs name the same host: a port or a scheme
// of its own does not make another host. Host names have no case.
func sameHost(a, b *url.URL) bool {
	return strings.EqualFold(a.Hostname(), b.Hostname())
}

func validMethod(m string) bool {
	return m != "" && strings.IndexFunc(m, func(r rune) bool {
		return r < 'A' || r > 'Z'
	}) < 0
}

// validHeaderName reports whether name is a token (RFC 7230, section 3.2.6),
// as a header's name must be.
func validHeaderName(name string) bool {
	return name != "" && strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("!#$%&'*+-.^_`|~", r))
	}) < 0
}

// isControl reports whether r may not be in a header's value: a control
// character other than the horizontal tab, CR and LF among them, which would
// end the header and start another.
func isControl(r rune) bool {
	return r < ' ' && r != '\t' || r == 0x7f
}

// compile compiles an optional regular expression, naming it in the error.
func compile(what, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%s pattern %q: %w", what, expr, err)
	}
	return re, nil
}

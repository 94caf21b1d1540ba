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
	// Body is a regular expression the body must match, and NotBody one it
	// must not. Only the first 10 KiB of a body is read. Neither goes with
	// method HEAD, whose answer has no body. Default none.
	Body, NotBody string
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
// passes with the default status set, as in the kubelet.
//
// A failure says why: Go's error for a request that got no answer (without
// the `Get "URL": ` the kubelet's output starts with), "HTTP probe
// failed with statuscode: 503" (the kubelet's words) for a status outside the
// set, and the pattern for a body that does not match. The body itself is
// never shown: it may hold secrets. A redirect to another host says where it
// leads: "HTTP probe failed with statuscode: 302 (a redirect to
// login.example.com, not followed)". The observed value is the latency in
// milliseconds.
func HTTP(s HTTPSpec) (*Prober, error) {
	u, err := url.Parse(s.URL)
	switch {
	case err != nil:
		return nil, Invalid("http", "URL %q: %w", s.URL, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, Invalid("http", "URL %q: scheme must be http or https", s.URL)
	case u.Host == "":
		return nil, Invalid("http", "URL %q has no host", s.URL)
	case u.Scheme == "http" && !s.TLS.isZero():
		return nil, Invalid("http", "URL %q: TLS options need an https URL", s.URL)
	}
	method := s.Method
	if method == "" {
		method = http.MethodGet
	}
	if !validMethod(method) {
		if upper := strings.ToUpper(method); validMethod(upper) {
			return nil, Invalid("http", "method %q is not an HTTP method (methods are upper case: %s)", method, upper)
		}
		return nil, Invalid("http", "method %q is not an HTTP method", method)
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
	if method == http.MethodHead {
		for _, p := range []struct{ what, expr string }{{"body", s.Body}, {"not-body", s.NotBody}} {
			if p.expr != "" {
				return nil, Invalid("http", "%s pattern %q with method HEAD: a HEAD answer has no body to match", p.what, p.expr)
			}
		}
	}
	header, err := requestHeader(s.Header)
	if err != nil {
		return nil, Invalid("http", "%w", err)
	}
	host := header.Get("Host")
	header.Del("Host")
	tlsConfig, err := s.TLS.Config()
	if err != nil {
		return nil, Invalid("http", "%w", err)
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

	h := &httpProbe{method: method, url: u.String(), host: host, header: header,
		statuses: statuses, body: body, notBody: notBody, client: client}
	return &Prober{kind: "http", target: method + " " + u.Redacted(), measure: h.measure}, nil
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

// hostOnly is the host of a Host header, without its port or an IPv6
// address's brackets.
func hostOnly(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

type httpProbe struct {
	method, url, host string
	header            http.Header
	statuses          StatusSet
	body, notBody     *regexp.Regexp
	client            *http.Client
}

func (h *httpProbe) measure(ctx context.Context) (health.Observation, error) {
	req, err := http.NewRequestWithContext(ctx, h.method, h.url, nil)
	if err != nil {
		return health.Observation{}, err
	}
	req.Header = h.header.Clone()
	req.Host = h.host
	start := time.Now()
	res, err := h.client.Do(req)
	if urlErr, ok := errors.AsType[*url.Error](err); ok {
		err = urlErr.Err // the target is known: keep what went wrong with it
	}
	if err != nil {
		return health.Observation{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
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
	case h.body != nil && !h.body.Match(body):
		return obs, fmt.Errorf("HTTP %d: body does not match %q", res.StatusCode, h.body.String())
	case h.notBody != nil && h.notBody.Match(body):
		return obs, fmt.Errorf("HTTP %d: body matches %q", res.StatusCode, h.notBody.String())
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

// Package promcheck judges a program by its own Prometheus metrics: a
// metric check scrapes an exposition over HTTP, as Prometheus would, and
// holds its conditions against the values it reads ("max(workqueue_longest_
// running_processor_seconds{controller=\"app\"}) < 5m"), with no change to
// the program. A controller-runtime manager, whose reconcilers' progress
// its workqueue and reconcile metrics tell, is the case it was made for.
//
// Parse reads a condition (its grammar is Expr's), with errors at the
// column of what is wrong; New builds the check of a Spec. The exposition is
// read by the text parser of Prometheus's own libraries (expfmt), the text
// format and OpenMetrics both, gzip accepted, bounded (MaxBytes,
// MaxSamples, MaxLabels). increase and rate are computed from the check's
// own earlier scrapes, which it keeps (state.go), as Prometheus computes
// them from its stored samples.
//
// promcheck sits under the kinds table (kinds/metric.go), beside the other
// packages that build checkers; it imports probe for the request (an http
// check's, field for field) and the comparisons, and health for results.
package promcheck

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// Spec is a metric check: where its exposition is, and what must hold of
// it.
type Spec struct {
	// Request is how the exposition is asked for: its request fields (URL,
	// Header, BearerTokenFile, TLS, NoFollowRedirects) are an http check's;
	// the fields that judge an answer are not used. URL is required.
	Request probe.HTTPSpec
	// Exprs are the conditions, each read by Parse; every one must hold.
	// At least one.
	Exprs []string
}

// accept asks for the text format first, which the parser reads as it is,
// then OpenMetrics, as Prometheus's own scrape asks for them.
const accept = "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.75,*/*;q=0.1"

// New builds the check of s: a probe of kind "metric". Each run scrapes the
// exposition and judges every condition. A run fails with Go's error for a
// request that got no answer, "HTTP 503: want a 2xx answer with the
// metrics" for a status outside 200-299, what is wrong with an answer that is not an exposition
// (with its line), and otherwise with every condition that fails, each
// saying what it saw and what it wanted:
//
//	max(workqueue_longest_running_processor_seconds{controller="kafkacluster"}) = 312.4 (want < 5m)
//
// A run passes with every condition, so written, as its message. A run in
// which no condition fails but one cannot be decided yet (a rate whose
// window has one scrape so far) is undecided (health.ErrUndecided). The
// observed value is that of the first condition that came to the run's
// verdict: the first that fails, or the first when all pass (none when that
// condition has none, as absent has none): a number (NaN and the infinities as the strings Prometheus writes
// them), in the unit the condition's value has.
func New(s Spec) (*probe.Prober, error) {
	if len(s.Exprs) == 0 {
		return nil, probe.Invalid("metric", "expr is required: give one condition or a list of them")
	}
	exprs := make([]*Expr, len(s.Exprs))
	for i, text := range s.Exprs {
		e, err := Parse(text)
		if err != nil {
			return nil, probe.Invalid("metric", "expr %q: %w", text, err)
		}
		exprs[i] = e
	}
	req := s.Request
	req.Header = req.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	setDefault(req.Header, "Accept", accept)
	setDefault(req.Header, "Accept-Encoding", "gzip")
	r, err := probe.NewHTTPRequest("metric", req)
	if err != nil {
		return nil, err
	}
	c := &check{req: r, exprs: exprs, st: newState(exprs), parser: newParser()}
	return probe.New("metric", r.String(), c.measure, nil), nil
}

// setDefault sets a header the spec does not give, in any case.
func setDefault(h http.Header, name, value string) {
	for k := range h {
		if strings.EqualFold(k, name) {
			return
		}
	}
	h.Set(name, value)
}

type check struct {
	req   *probe.HTTPRequest
	exprs []*Expr

	mu     sync.Mutex // guards what a run reads and changes: the windows, the parser
	st     *state
	parser *parser
	body   []byte // kept from one scrape to the next, unless large
}

// keptBody caps the buffer a check keeps between scrapes: one that read a
// larger answer lets it go.
const keptBody = 1 << 20

func (c *check) measure(ctx context.Context) (health.Observation, error) {
	res, err := c.req.Do(ctx)
	if err != nil {
		return health.Observation{}, err
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return health.Observation{}, fmt.Errorf("HTTP %d: want a 2xx answer with the metrics", res.StatusCode)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() {
		if cap(c.body) > keptBody {
			c.body = nil
		}
		c.parser.release()
	}()
	if err := c.read(res); err != nil {
		return health.Observation{}, err
	}
	now := time.Now() // the samples' time: the answer's, as a scrape without timestamps has it
	x, err := c.parser.parse(c.body, isOpenMetrics(res.Header))
	if err != nil {
		return health.Observation{}, err
	}
	if err := c.st.observe(x, now); err != nil {
		return health.Observation{}, err
	}
	ev := &eval{x: x, now: now, st: c.st}
	verdicts := make([]verdict, len(c.exprs))
	for i, e := range c.exprs {
		verdicts[i] = ev.node(e.root)
	}
	return judge(verdicts)
}

// read reads the answer's body into c.body, ungzipped, failing past
// MaxBytes.
func (c *check) read(res *http.Response) error {
	body := io.Reader(res.Body)
	size := 64 << 10 // a guess of a body's size, for one whose length is not said
	if n := res.ContentLength; n > 0 && res.Header.Get("Content-Encoding") == "" {
		size = int(min(n, MaxBytes)) + 1 // room for all of it at once, and to see its end
	}
	switch enc := res.Header.Get("Content-Encoding"); {
	case strings.EqualFold(enc, "gzip"):
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			return fmt.Errorf("the answer says it is gzip, and is not: %w", err)
		}
		defer zr.Close()
		body = zr
	case enc != "" && !strings.EqualFold(enc, "identity"):
		return fmt.Errorf("the answer is encoded as %q: a scrape takes gzip, or none", enc)
	}
	var err error
	c.body, err = readMost(c.body[:0], body, size)
	if err != nil {
		return err
	}
	return nil
}

// readMost appends r to buf up to its end, failing when it has more than
// MaxBytes. buf grows twofold from size as it fills, but never past
// MaxBytes and one byte, which tells a body at the bound from one past it:
// a body that never ends costs that, and no more.
func readMost(buf []byte, r io.Reader, size int) ([]byte, error) {
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	for {
		if len(buf) == cap(buf) {
			if len(buf) > MaxBytes {
				return buf, fmt.Errorf("the answer is larger than %d MiB, the most a scrape reads", MaxBytes>>20)
			}
			next := 2 * cap(buf)
			if next >= MaxBytes {
				next = MaxBytes + 1
			}
			grown := make([]byte, len(buf), next)
			buf = grown[:copy(grown, buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case len(buf) > MaxBytes:
			return buf, fmt.Errorf("the answer is larger than %d MiB, the most a scrape reads", MaxBytes>>20)
		case errors.Is(err, io.EOF):
			return buf, nil
		case err != nil:
			return buf, fmt.Errorf("read the answer: %w", err)
		}
	}
}

// isOpenMetrics reports whether an answer says it is OpenMetrics.
func isOpenMetrics(h http.Header) bool {
	return expfmt.ResponseFormat(h).FormatType() == expfmt.TypeOpenMetrics
}

// judge is the run of every condition's verdict: it fails with those that
// fail, is undecided with those undecided when none fails, and passes with
// them all.
func judge(vs []verdict) (health.Observation, error) {
	overall := holds
	for _, v := range vs {
		switch {
		case v.truth == fails:
			overall = fails
		case v.truth == undecided && overall == holds:
			overall = undecided
		}
	}
	var texts []string
	obs := health.Observation{}
	for _, v := range vs {
		if overall == holds || v.truth == overall {
			texts = append(texts, v.text)
		}
	}
	for _, v := range vs { // the first that came to the run's truth, which decided it
		if v.truth == overall && v.hasValue {
			obs.Value, obs.Unit = probe.ObservedNumber(v.value), v.unit
			break
		}
	}
	text := strings.Join(texts, "; ")
	switch overall {
	case fails:
		return obs, errors.New(text)
	case undecided:
		return obs, health.Undecided(text)
	}
	obs.Message = text
	return obs, nil
}

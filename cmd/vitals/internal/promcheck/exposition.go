package promcheck

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const (
	// MaxBytes caps what a scrape reads of an answer, after gzip: a
	// controller's exposition is tens to hundreds of KiB (5,000 series of
	// controller-runtime's are 451 KiB), MaxSamples of them about 4.5 MiB,
	// and a larger one, or one that never ends, must not make vitals hold
	// it.
	MaxBytes = 8 << 20 // 8 MiB
	// MaxSamples caps the samples of an exposition that a scrape parses
	// (each histogram bucket is one, as Prometheus's sample_limit counts
	// them): they are counted before the parser makes a value of each, so
	// that an exposition of millions of tiny series costs a count, not a
	// parse. A controller-runtime manager has a few thousand.
	MaxSamples = 50_000
	// MaxLabels caps the label pairs of the samples a scrape parses, five
	// a sample at MaxSamples (controller-runtime's have one to three):
	// the parser makes a value of each pair, and a body within MaxBytes
	// could hold millions. They are counted with the samples, by their
	// =" (a value holding =" counts more than once: the bound errs on the
	// side of the memory).
	MaxLabels = 5 * MaxSamples
)

// exposition is one scrape's metric families, as the text parser of
// Prometheus's own libraries (expfmt) reads them, by name.
type exposition map[string]*dto.MetricFamily

// parser reads expositions: the text format, and OpenMetrics made into it
// (openMetricsAsText). It keeps the text parser between scrapes, which is
// not safe for concurrent use: neither is a parser.
type parser struct {
	text expfmt.TextParser
	om   []byte // the text made of an OpenMetrics exposition, kept between scrapes
}

func newParser() *parser {
	return &parser{text: expfmt.NewTextParser(model.UTF8Validation)}
}

// release lets go of a large OpenMetrics text kept from the last scrape,
// as check.measure lets go of a large body.
func (p *parser) release() {
	if cap(p.om) > keptBody {
		p.om = nil
	}
}

// parse reads body, an exposition in the text format or, when openMetrics,
// in OpenMetrics. What is wrong says where: "line 12: …".
func (p *parser) parse(body []byte, openMetrics bool) (exposition, error) {
	switch samples, labels := countSamples(body); {
	case samples > MaxSamples:
		return nil, fmt.Errorf("the exposition has more than %d samples, the most a scrape reads", MaxSamples)
	case labels > MaxLabels:
		return nil, fmt.Errorf("the exposition's samples have more than %d labels, the most a scrape reads", MaxLabels)
	}
	if openMetrics || endsWithEOF(body) {
		p.om = openMetricsAsText(p.om[:0], body)
		body = p.om
	}
	families, err := p.text.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		var pe expfmt.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("the answer is not a Prometheus exposition: line %d: %s", pe.Line, pe.Msg)
		}
		return nil, fmt.Errorf("the answer is not a Prometheus exposition: %w", err)
	}
	return families, nil
}

// countSamples counts the lines of body that are samples, not comments nor
// blank, and their label pairs (their =", see MaxLabels), stopping once
// past either bound.
func countSamples(body []byte) (samples, labels int) {
	for len(body) > 0 && samples <= MaxSamples && labels <= MaxLabels {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		line = bytes.TrimLeft(line, " \t")
		if len(line) > 0 && line[0] != '#' {
			samples++
			labels += bytes.Count(line, []byte(`="`))
		}
	}
	return samples, labels
}

// endsWithEOF reports whether body's last line is OpenMetrics's "# EOF":
// an OpenMetrics exposition served under another content type.
func endsWithEOF(body []byte) bool {
	return bytes.HasSuffix(bytes.TrimRight(body, "\n"), []byte("\n# EOF")) || bytes.Equal(bytes.TrimRight(body, "\n"), []byte("# EOF"))
}

// openMetricsAsText appends to dst what the text parser needs of an
// OpenMetrics exposition, line for line, so that a parse error's line is
// the exposition's:
//
//   - no TYPE line: each sample is a series of its own name, as a sample
//     selector names it (x_total, x_bucket), whatever family it is of;
//     OpenMetrics's types (info, stateset, gaugehistogram, unknown) and
//     its counters' families (x, whose samples are x_total) are not the
//     text format's, and a selector reads samples, not families;
//   - no _created sample of a counter, a histogram or a summary: it is the
//     family's metadata, not a series of its own, and a scrape in the text
//     format has none (Prometheus's maintainers say the same);
//   - no timestamp nor exemplar after a value: a check judges the value
//     now, and OpenMetrics writes timestamps in seconds, the text format in
//     milliseconds.
//
// Comment lines (# HELP, # UNIT, # EOF) stay, as comments.
func openMetricsAsText(dst, body []byte) []byte {
	created := map[string]bool{} // families whose NAME_created samples are metadata
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		trimmed := bytes.TrimLeft(line, " \t")
		switch {
		case bytes.HasPrefix(trimmed, []byte("#")):
			if f := strings.Fields(string(trimmed)); len(f) == 4 && f[1] == "TYPE" {
				switch f[3] {
				case "counter", "histogram", "gaugehistogram", "summary":
					created[f[2]] = true
				}
				dst = append(dst, '#') // a comment now
			} else {
				dst = append(dst, line...)
			}
		case len(trimmed) == 0:
		default:
			name, end := sampleParts(trimmed)
			if base, ok := strings.CutSuffix(name, "_created"); ok && created[base] {
				break // an empty line in its place
			}
			dst = append(dst, trimmed[:end]...)
		}
		dst = append(dst, '\n')
	}
	return dst
}

// sampleParts reads a sample line, name{labels} value [timestamp] [#
// exemplar], and returns its name and where its value ends. A line it
// cannot read is returned whole, for the text parser to say what is wrong
// with it.
func sampleParts(line []byte) (name string, end int) {
	i := 0
	if line[0] != '{' {
		for i < len(line) && line[i] != '{' && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		name = string(line[:i])
	}
	if i < len(line) && line[i] == '{' {
		quoted := ""
		for i++; i < len(line) && line[i] != '}'; i++ {
			if line[i] != '"' {
				continue
			}
			j := i + 1
			for j < len(line) && line[j] != '"' {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(line) {
				return name, len(line)
			}
			if quoted == "" && name == "" {
				// The first string in the braces is the name when it stands
				// alone: {"my.metric", …}.
				k := j + 1
				for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
					k++
				}
				if k < len(line) && (line[k] == ',' || line[k] == '}') {
					if v, err := strconv.Unquote(string(line[i : j+1])); err == nil {
						quoted = v
					}
				}
			}
			i = j
		}
		if i >= len(line) {
			return name, len(line)
		}
		i++ // the closing brace
		if name == "" {
			name = quoted
		}
	}
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	for i < len(line) && line[i] != ' ' && line[i] != '\t' {
		i++
	}
	return name, i
}

// series is one series of a scrape: its name, its labels and its value.
type series struct {
	name   string
	labels []label // sorted by name, without __name__
	value  float64
}

type label struct{ name, value string }

// key is the series as PromQL writes it, name{label="value", …}, its
// labels sorted: the series' identity from one scrape to the next, and how
// an output names it.
func (s series) key() string {
	var b strings.Builder
	b.WriteString(s.name)
	if len(s.labels) == 0 {
		return b.String()
	}
	b.WriteByte('{')
	for i, l := range s.labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.name)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(l.value))
	}
	b.WriteByte('}')
	return b.String()
}

// selectSeries calls fn with every series of x that sel matches: in the
// exposition's order for a selector with a name, in no set order for one
// without.
func (x exposition) selectSeries(sel *selector, fn func(series)) {
	if sel.name != "" {
		// Where a series of that name can be: a family of that name, or the
		// histogram or summary whose _bucket, _sum or _count it is.
		if mf := x[sel.name]; mf != nil {
			familySeries(mf, sel, fn)
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(sel.name, suffix); ok {
				if mf := x[base]; mf != nil && isHistogramOrSummary(mf) {
					familySeries(mf, sel, fn)
				}
			}
		}
		return
	}
	for _, mf := range x {
		familySeries(mf, sel, fn)
	}
}

func isHistogramOrSummary(mf *dto.MetricFamily) bool {
	switch mf.GetType() {
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM, dto.MetricType_SUMMARY:
		return true
	}
	return false
}

// familySeries calls fn with the series of mf that sel matches, its
// histograms and summaries as their samples: NAME_bucket{le="…"} (with the
// +Inf bucket), NAME{quantile="…"}, NAME_sum and NAME_count, as Prometheus
// stores them.
func familySeries(mf *dto.MetricFamily, sel *selector, fn func(series)) {
	name := mf.GetName()
	emit := func(sample string, m *dto.Metric, extra, extraValue string, v float64) {
		if !matches(sel, sample, m, extra, extraValue) {
			return
		}
		fn(series{name: sample, labels: labelsOf(m, extra, extraValue), value: v})
	}
	for _, m := range mf.GetMetric() {
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			emit(name, m, "", "", m.GetCounter().GetValue())
		case dto.MetricType_GAUGE:
			emit(name, m, "", "", m.GetGauge().GetValue())
		case dto.MetricType_UNTYPED:
			emit(name, m, "", "", m.GetUntyped().GetValue())
		case dto.MetricType_SUMMARY:
			s := m.GetSummary()
			for _, q := range s.GetQuantile() {
				emit(name, m, model.QuantileLabel, formatFloat(q.GetQuantile()), q.GetValue())
			}
			emit(name+"_sum", m, "", "", s.GetSampleSum())
			emit(name+"_count", m, "", "", float64(s.GetSampleCount()))
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			h := m.GetHistogram()
			count := float64(h.GetSampleCount())
			if h.SampleCountFloat != nil {
				count = h.GetSampleCountFloat()
			}
			inf := false
			for _, b := range h.GetBucket() {
				n := float64(b.GetCumulativeCount())
				if b.CumulativeCountFloat != nil {
					n = b.GetCumulativeCountFloat()
				}
				inf = inf || math.IsInf(b.GetUpperBound(), 1)
				emit(name+"_bucket", m, model.BucketLabel, formatFloat(b.GetUpperBound()), n)
			}
			if !inf { // the +Inf bucket is the count, which the protobuf form leaves out
				emit(name+"_bucket", m, model.BucketLabel, "+Inf", count)
			}
			emit(name+"_sum", m, "", "", h.GetSampleSum())
			emit(name+"_count", m, "", "", count)
		}
	}
}

// matches reports whether the sample of series m named name, with the
// label extra (le, quantile; "" for none), meets every matcher of sel.
func matches(sel *selector, name string, m *dto.Metric, extra, extraValue string) bool {
	if sel.name != "" && sel.name != name {
		return false
	}
	for _, mt := range sel.matchers {
		var v string
		switch {
		case mt.label == model.MetricNameLabel:
			v = name
		case extra != "" && mt.label == extra:
			v = extraValue
		default:
			for _, lp := range m.GetLabel() {
				if lp.GetName() == mt.label {
					v = canonical(lp.GetName(), lp.GetValue())
					break
				}
			}
		}
		if !mt.matches(v) {
			return false
		}
	}
	return true
}

// labelsOf is the labels of a series, sorted, with the extra one.
func labelsOf(m *dto.Metric, extra, extraValue string) []label {
	out := make([]label, 0, len(m.GetLabel())+1)
	for _, lp := range m.GetLabel() {
		if lp.GetName() != model.MetricNameLabel {
			out = append(out, label{lp.GetName(), canonical(lp.GetName(), lp.GetValue())})
		}
	}
	if extra != "" {
		out = append(out, label{extra, extraValue})
	}
	slices.SortFunc(out, func(a, b label) int { return strings.Compare(a.name, b.name) })
	return out
}

// canonical is a label's value as selectors compare it: le and quantile,
// numbers that expositions write in several ways (1, 1.0, 1e0), in the one
// way that Prometheus 3 stores them (1.0, 0.005, +Inf), whichever way the
// exposition or the selector writes them; any other label as it is.
func canonical(name, value string) string {
	if name != model.BucketLabel && name != model.QuantileLabel {
		return value
	}
	f, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return value
	}
	return formatFloat(f)
}

// formatFloat writes a bound as OpenMetrics, and Prometheus 3 in the le
// and quantile labels it stores, write one: 0.005, 1.0, 1e-08, +Inf.
func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

package client

import (
	"cmp"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// The status writes each check's kept results compactly (results), not as
// the list of objects GET /v1/checks/NAME writes (history): 200 checks with
// 60 results each are 1.9 MB as objects, and the page reads the status every
// few seconds. Numbers are base64 VLQ and each distinct outcome is written
// once, so that a result costs a few characters. Status's MarshalJSON and
// UnmarshalJSON turn one into the other, so that Go callers read
// Check.History and Check.Last as from the API: starts to the millisecond,
// durations to the tenth of a millisecond (resultDuration).

// resultDuration is the unit of a result's duration in the status: the
// finest the page shows a run of a millisecond or more to.
const resultDuration = 100 * time.Microsecond

// results are a check's kept results, oldest first.
type results struct {
	// Runs are numbers, two or three a result in turn: its start, in
	// milliseconds after the previous result's start and the check's
	// period (0 for a run on time, -480 for one 480ms early; the first:
	// since the Unix epoch); its duration, in resultDuration; and, when
	// the results have more than one outcome, the index of its own.
	Runs numbers `json:"runs"`
	// Outcomes are the distinct outcomes of the results, in the order they
	// first came.
	Outcomes outcomes `json:"outcomes"`
	// Value is each result's observed value, null where it has none;
	// absent when none has one.
	Value []any `json:"value,omitempty"`
}

// numbers are written as one string of base64 VLQ, as a source map's
// mappings are: each number in digits of 5 bits, least significant first,
// its sign in the lowest bit of the first, every digit but the last with
// 32 added, each digit one of vlqDigits. Numbers from -15 to 15 are one
// character, up to ±511 two, up to ±16383 three.
type numbers []int64

const vlqDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// vlqValue is each byte's digit in vlqDigits, or -1.
var vlqValue = func() (v [256]int8) {
	for i := range v {
		v[i] = -1
	}
	for i := range len(vlqDigits) {
		v[vlqDigits[i]] = int8(i)
	}
	return v
}()

func (ns numbers) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+2*len(ns))
	b = append(b, '"')
	for _, n := range ns {
		v := uint64(n) << 1
		if n < 0 {
			v = uint64(-n)<<1 | 1
		}
		for ; v >= 32; v >>= 5 {
			b = append(b, vlqDigits[32|v&31])
		}
		b = append(b, vlqDigits[v])
	}
	return append(b, '"'), nil
}

func (ns *numbers) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	out := make(numbers, 0, len(s))
	var v uint64
	shift := 0
	for i := range len(s) {
		d := vlqValue[s[i]]
		if d < 0 {
			return fmt.Errorf("numbers: %q at %d is no base64 digit", s[i], i)
		}
		if shift > 60 || (shift == 60 && d&31 > 15) { // bits 60 to 63 are the last of a uint64
			return fmt.Errorf("numbers: the number that ends at %d is longer than 64 bits", i)
		}
		v |= uint64(d&31) << shift
		if d&32 != 0 {
			shift += 5
			continue
		}
		n := int64(v >> 1)
		if v&1 != 0 {
			n = -n
		}
		out = append(out, n)
		v, shift = 0, 0
	}
	if shift != 0 {
		return fmt.Errorf("numbers: the last one is cut short")
	}
	*ns = out
	return nil
}

// outcome is what a run said: its status, output and observed unit. Its
// texts are as JSON writes them, an invalid byte as U+FFFD, so that two
// outcomes that read the same are one.
type outcome struct {
	status       byte // p passed, w passed with a warning, f failed, u undecided
	output, unit string
}

func outcomeOf(r Result) outcome {
	o := outcome{status: 'f', output: asJSON(r.Output), unit: asJSON(r.ObservedUnit)}
	switch {
	case r.OK && r.Warn:
		o.status = 'w'
	case r.OK:
		o.status = 'p'
	case r.Undecided:
		o.status = 'u'
	}
	return o
}

// asJSON is s as JSON writes it: an invalid byte is U+FFFD.
func asJSON(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}

// outcomes are written as one flat array, two items an outcome: its status
// letter followed by its unit ("p", "ps"), and its output as a change from
// the previous outcome's (the one before the first is ""): a string when
// it shares nothing with it, else [front, back, "middle"], the previous
// output's first front and last back characters (Unicode code points)
// with middle between them. An output whose number changes from run to run
// costs the digits that change.
type outcomes []outcome

func (oc outcomes) MarshalJSON() ([]byte, error) {
	flat := make([]any, 0, 2*len(oc))
	var prev []rune
	for _, o := range oc {
		cur := []rune(o.output)
		front := 0
		for front < len(prev) && front < len(cur) && prev[front] == cur[front] {
			front++
		}
		back := 0
		for back < len(prev)-front && back < len(cur)-front && prev[len(prev)-1-back] == cur[len(cur)-1-back] {
			back++
		}
		var change any = o.output
		if front > 0 || back > 0 {
			change = []any{front, back, string(cur[front : len(cur)-back])}
		}
		flat = append(flat, string(o.status)+o.unit, change)
		prev = cur
	}
	return json.Marshal(flat)
}

func (oc *outcomes) UnmarshalJSON(b []byte) error {
	var flat []json.RawMessage
	if err := json.Unmarshal(b, &flat); err != nil {
		return err
	}
	if len(flat)%2 != 0 {
		return fmt.Errorf("outcomes are two items each (status and unit, output), not %d items", len(flat))
	}
	*oc = make(outcomes, len(flat)/2)
	var prev []rune
	for i := range *oc {
		var statusUnit string
		if err := json.Unmarshal(flat[2*i], &statusUnit); err != nil || statusUnit == "" || !validStatus(statusUnit[0]) {
			return fmt.Errorf("outcome %d: %s is no status letter (p, w, f, u) followed by a unit", i, flat[2*i])
		}
		var cur []rune
		var text string
		var change []json.RawMessage
		if json.Unmarshal(flat[2*i+1], &text) == nil {
			cur = []rune(text)
		} else {
			var front, back int
			var middle string
			err := json.Unmarshal(flat[2*i+1], &change)
			if err == nil && len(change) == 3 {
				err = cmp.Or(json.Unmarshal(change[0], &front), json.Unmarshal(change[1], &back), json.Unmarshal(change[2], &middle))
			}
			if err != nil || len(change) != 3 || front < 0 || back < 0 || front > len(prev) || back > len(prev)-front {
				return fmt.Errorf("outcome %d: %s is neither an output nor [front, back, middle] within the previous one's %d characters",
					i, flat[2*i+1], len(prev))
			}
			cur = append(append(append(cur, prev[:front]...), []rune(middle)...), prev[len(prev)-back:]...)
		}
		(*oc)[i] = outcome{status: statusUnit[0], unit: statusUnit[1:], output: string(cur)}
		prev = cur
	}
	return nil
}

func validStatus(c byte) bool { return c == 'p' || c == 'w' || c == 'f' || c == 'u' }

func newResults(h []Result, period time.Duration) *results {
	if len(h) == 0 {
		return nil
	}
	r := &results{}
	// A check keeps tens of results, and has fewer outcomes: a look
	// through them costs less than a map.
	outcome := make([]int64, len(h))
	for i, x := range h {
		o := outcomeOf(x)
		j := 0
		for j < len(r.Outcomes) && r.Outcomes[j] != o {
			j++
		}
		if j == len(r.Outcomes) {
			r.Outcomes = append(r.Outcomes, o)
		}
		outcome[i] = int64(j)
		if x.ObservedValue != nil {
			if r.Value == nil {
				r.Value = make([]any, len(h))
			}
			r.Value[i] = x.ObservedValue
		}
	}
	perResult := 2
	if len(r.Outcomes) > 1 {
		perResult = 3
	}
	r.Runs = make(numbers, 0, perResult*len(h))
	var prev int64
	for i, x := range h {
		t := x.Time.UnixMilli()
		start := t - prev
		if i > 0 {
			start -= period.Milliseconds()
		}
		prev = t
		r.Runs = append(r.Runs, start, int64(time.Duration(x.Duration).Round(resultDuration)/resultDuration))
		if perResult == 3 {
			r.Runs = append(r.Runs, outcome[i])
		}
	}
	return r
}

func (r *results) history(period time.Duration) ([]Result, error) {
	perResult := 2
	if len(r.Outcomes) > 1 {
		perResult = 3
	}
	n := len(r.Runs) / perResult
	if len(r.Runs)%perResult != 0 || len(r.Outcomes) == 0 || (r.Value != nil && len(r.Value) != n) {
		return nil, fmt.Errorf("results: %d numbers for runs of %d each, %d outcomes, %d values", len(r.Runs), perResult, len(r.Outcomes), len(r.Value))
	}
	h := make([]Result, n)
	var t int64
	for i := range h {
		run := r.Runs[perResult*i:]
		t += run[0]
		if i > 0 {
			t += period.Milliseconds()
		}
		h[i].Time = time.UnixMilli(t).UTC()
		h[i].Duration = Duration(time.Duration(run[1]) * resultDuration)
		var j int64
		if perResult == 3 {
			j = run[2]
		}
		if j < 0 || j >= int64(len(r.Outcomes)) {
			return nil, fmt.Errorf("results: result %d has outcome %d of %d", i, j, len(r.Outcomes))
		}
		o := r.Outcomes[j]
		h[i].Output, h[i].ObservedUnit = o.output, o.unit
		switch o.status {
		case 'p':
			h[i].OK = true
		case 'w':
			h[i].OK, h[i].Warn = true, true
		case 'u':
			h[i].Undecided = true
		}
		if r.Value != nil {
			h[i].ObservedValue = r.Value[i]
		}
	}
	return h, nil
}

// statusFields is Status without its methods.
type statusFields Status

// statusJSON is Status as JSON: its checks written with their results.
type statusJSON struct {
	*statusFields
	Checks []statusCheck `json:"checks"`
}

// statusCheck is a Check as the status writes it: its kept results as
// results, no last, which is the last of them, and without the fields
// that have the value most checks have: not stopped, no consecutive
// successes or failures, thresholds of 1 and 3, no initial delay. History
// and Last are read too, as an agent from before results wrote them.
type statusCheck struct {
	*Check
	Stopped          bool     `json:"stopped,omitzero"`
	Successes        int      `json:"successes,omitzero"`
	Failures         int      `json:"failures,omitzero"`
	SuccessThreshold int      `json:"successThreshold,omitzero"` // absent: 1
	FailureThreshold int      `json:"failureThreshold,omitzero"` // absent: 3
	InitialDelay     Duration `json:"initialDelay,omitzero"`
	Last             *Result  `json:"last,omitempty"`
	History          []Result `json:"history,omitempty"`
	Results          *results `json:"results,omitempty"`
}

// The thresholds a status leaves out: health.DefaultCheck's.
const (
	statusSuccessThreshold = 1
	statusFailureThreshold = 3
)

func (s Status) MarshalJSON() ([]byte, error) {
	out := statusJSON{statusFields: (*statusFields)(&s), Checks: make([]statusCheck, len(s.Checks))}
	for i := range s.Checks {
		c := &s.Checks[i]
		sc := statusCheck{Check: c, Stopped: c.Stopped, Successes: c.Successes, Failures: c.Failures,
			SuccessThreshold: c.SuccessThreshold, FailureThreshold: c.FailureThreshold, InitialDelay: c.InitialDelay,
			Results: newResults(c.History, time.Duration(c.Period))}
		if sc.SuccessThreshold == statusSuccessThreshold {
			sc.SuccessThreshold = 0
		}
		if sc.FailureThreshold == statusFailureThreshold {
			sc.FailureThreshold = 0
		}
		if len(c.History) == 0 {
			sc.Last = c.Last
		}
		out.Checks[i] = sc
	}
	return json.Marshal(out)
}

func (s *Status) UnmarshalJSON(b []byte) error {
	in := statusJSON{statusFields: (*statusFields)(s)}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	s.Checks = make([]Check, len(in.Checks))
	for i, sc := range in.Checks {
		c := &s.Checks[i]
		if sc.Check != nil {
			*c = *sc.Check
		}
		c.Stopped, c.Successes, c.Failures, c.InitialDelay = sc.Stopped, sc.Successes, sc.Failures, sc.InitialDelay
		c.SuccessThreshold, c.FailureThreshold = cmp.Or(sc.SuccessThreshold, statusSuccessThreshold), cmp.Or(sc.FailureThreshold, statusFailureThreshold)
		c.Last, c.History = sc.Last, sc.History
		if sc.Results != nil {
			h, err := sc.Results.history(time.Duration(c.Period))
			if err != nil {
				return fmt.Errorf("check %q: %w", c.Name, err)
			}
			c.History = h
		}
		if n := len(c.History); n > 0 && c.Last == nil {
			last := c.History[n-1]
			c.Last = &last
		}
	}
	return nil
}

package client

import (
	"encoding/json"
	"fmt"
	"time"
)

// The status writes each check's kept results as columns (results), not
// as the list of objects GET /v1/checks/NAME writes (history): 200 checks
// with 60 results each are about 1.6 MB as objects, and the page reads the
// status every few seconds. Status's MarshalJSON and UnmarshalJSON turn one
// into the other, so that Go callers read Check.History and Check.Last as
// from the API.

// results are a check's kept results, oldest first, as the status writes
// them: a column per field, each result at the same index in each.
type results struct {
	// From is the first result's start, to the millisecond.
	From time.Time `json:"from"`
	// Time is each result's start in milliseconds after the previous
	// result's start and the check's period: 0 for a run on time, -480
	// for one 480ms early (the first: after From, 0).
	Time []int64 `json:"time"`
	// Duration is each run's duration in microseconds.
	Duration []int64 `json:"duration"`
	// Status is a letter per result: p passed, w passed with a warning,
	// f failed, u undecided.
	Status string `json:"status"`
	// Output and Unit are each result's output and observed unit, written
	// only where they change: see textChange. Absent when every one is "".
	Output textChanges `json:"output,omitempty"`
	Unit   textChanges `json:"unit,omitempty"`
	// Value is each result's observed value, null where it has none;
	// absent when none has one.
	Value []any `json:"value,omitempty"`
}

// textChange is a text that differs from the previous result's (the one
// before the first is ""): the text of result At is the previous text's
// first Front and last Back characters (Unicode code points) with Middle
// between them. An output whose number changes from run to run costs the
// digits that change.
type textChange struct {
	At, Front, Back int
	Middle          string
}

// textChanges are written as one flat array, four items a change: skip,
// front, back, "middle", where skip is how many results since the previous
// change's (since the first result, for the first).
type textChanges []textChange

func (cs textChanges) MarshalJSON() ([]byte, error) {
	flat := make([]any, 0, 4*len(cs))
	prev := 0
	for _, c := range cs {
		flat = append(flat, c.At-prev, c.Front, c.Back, c.Middle)
		prev = c.At
	}
	return json.Marshal(flat)
}

func (cs *textChanges) UnmarshalJSON(b []byte) error {
	var flat []json.RawMessage
	if err := json.Unmarshal(b, &flat); err != nil {
		return err
	}
	if len(flat)%4 != 0 {
		return fmt.Errorf("text changes are four items each (skip, front, back, middle), not %d items", len(flat))
	}
	*cs = make(textChanges, len(flat)/4)
	at := 0
	for i := range *cs {
		c := &(*cs)[i]
		var skip int
		for j, p := range []any{&skip, &c.Front, &c.Back, &c.Middle} {
			if err := json.Unmarshal(flat[4*i+j], p); err != nil {
				return fmt.Errorf("text change %d: %w", i, err)
			}
		}
		at += skip
		c.At = at
	}
	return nil
}

// textColumn writes the texts as the changes from one to the next. Texts
// are compared as JSON writes them: an invalid byte is one U+FFFD.
func textColumn(texts func(int) string, n int) textChanges {
	var out textChanges
	var prev []rune
	prevText := ""
	for i := range n {
		s := texts(i)
		if s == prevText {
			continue
		}
		prevText = s
		cur := []rune(s)
		front := 0
		for front < len(prev) && front < len(cur) && prev[front] == cur[front] {
			front++
		}
		back := 0
		for back < len(prev)-front && back < len(cur)-front && prev[len(prev)-1-back] == cur[len(cur)-1-back] {
			back++
		}
		if front == len(prev) && back == 0 && front == len(cur) {
			prev = cur
			continue // the same, once invalid bytes are U+FFFD
		}
		out = append(out, textChange{At: i, Front: front, Back: back, Middle: string(cur[front : len(cur)-back])})
		prev = cur
	}
	return out
}

// readTextColumn sets each of n texts from the changes.
func readTextColumn(changes textChanges, n int, set func(int, string)) error {
	var prev []rune
	next := 0
	for i := range n {
		if next < len(changes) && changes[next].At == i {
			c := changes[next]
			if c.Front < 0 || c.Back < 0 || c.Front+c.Back > len(prev) {
				return fmt.Errorf("text change at %d keeps %d and %d characters of %d", i, c.Front, c.Back, len(prev))
			}
			prev = append(append(append([]rune{}, prev[:c.Front]...), []rune(c.Middle)...), prev[len(prev)-c.Back:]...)
			next++
		}
		set(i, string(prev))
	}
	if next != len(changes) {
		return fmt.Errorf("text change at %d: out of order or past the %d results", changes[next].At, n)
	}
	return nil
}

func newResults(h []Result, period time.Duration) *results {
	if len(h) == 0 {
		return nil
	}
	r := &results{From: h[0].Time.Truncate(time.Millisecond), Time: make([]int64, len(h)), Duration: make([]int64, len(h))}
	status := make([]byte, len(h))
	prev := r.From
	for i, x := range h {
		t := x.Time.Truncate(time.Millisecond)
		r.Time[i] = t.Sub(prev).Milliseconds()
		if i > 0 {
			r.Time[i] -= period.Milliseconds()
		}
		prev = t
		r.Duration[i] = time.Duration(x.Duration).Round(time.Microsecond).Microseconds()
		switch {
		case x.OK && x.Warn:
			status[i] = 'w'
		case x.OK:
			status[i] = 'p'
		case x.Undecided:
			status[i] = 'u'
		default:
			status[i] = 'f'
		}
		if x.ObservedValue != nil {
			if r.Value == nil {
				r.Value = make([]any, len(h))
			}
			r.Value[i] = x.ObservedValue
		}
	}
	r.Status = string(status)
	r.Output = textColumn(func(i int) string { return h[i].Output }, len(h))
	r.Unit = textColumn(func(i int) string { return h[i].ObservedUnit }, len(h))
	return r
}

func (r *results) history(period time.Duration) ([]Result, error) {
	n := len(r.Status)
	if len(r.Time) != n || len(r.Duration) != n || (r.Value != nil && len(r.Value) != n) {
		return nil, fmt.Errorf("results: %d statuses, %d times, %d durations, %d values", n, len(r.Time), len(r.Duration), len(r.Value))
	}
	h := make([]Result, n)
	t := r.From
	for i := range h {
		t = t.Add(time.Duration(r.Time[i]) * time.Millisecond)
		if i > 0 {
			t = t.Add(period.Truncate(time.Millisecond))
		}
		h[i].Time = t
		h[i].Duration = Duration(time.Duration(r.Duration[i]) * time.Microsecond)
		switch r.Status[i] {
		case 'p':
			h[i].OK = true
		case 'w':
			h[i].OK, h[i].Warn = true, true
		case 'u':
			h[i].Undecided = true
		case 'f':
		default:
			return nil, fmt.Errorf("results: status %q is none of p, w, f, u", r.Status[i])
		}
		if r.Value != nil {
			h[i].ObservedValue = r.Value[i]
		}
	}
	if err := readTextColumn(r.Output, n, func(i int, s string) { h[i].Output = s }); err != nil {
		return nil, fmt.Errorf("results output: %w", err)
	}
	if err := readTextColumn(r.Unit, n, func(i int, s string) { h[i].ObservedUnit = s }); err != nil {
		return nil, fmt.Errorf("results unit: %w", err)
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
// results, and no last, which is the last of them. History and Last are
// read too, as an agent from before results wrote them.
type statusCheck struct {
	*Check
	Last    *Result  `json:"last,omitempty"`
	History []Result `json:"history,omitempty"`
	Results *results `json:"results,omitempty"`
}

func (s Status) MarshalJSON() ([]byte, error) {
	out := statusJSON{statusFields: (*statusFields)(&s), Checks: make([]statusCheck, len(s.Checks))}
	for i := range s.Checks {
		c := &s.Checks[i]
		out.Checks[i] = statusCheck{Check: c, Results: newResults(c.History, time.Duration(c.Period))}
		if len(c.History) == 0 {
			out.Checks[i].Last = c.Last
		}
	}
	return json.Marshal(out)
}

func (s *Status) UnmarshalJSON(b []byte) error {
	in := statusJSON{statusFields: (*statusFields)(s)}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	s.Checks = make([]Check, len(in.Checks))
	for i, c := range in.Checks {
		if c.Check != nil {
			s.Checks[i] = *c.Check
		}
		s.Checks[i].Last, s.Checks[i].History = c.Last, c.History
		if c.Results != nil {
			h, err := c.Results.history(time.Duration(s.Checks[i].Period))
			if err != nil {
				return fmt.Errorf("check %q: %w", s.Checks[i].Name, err)
			}
			s.Checks[i].History = h
		}
		if n := len(s.Checks[i].History); n > 0 && s.Checks[i].Last == nil {
			last := s.Checks[i].History[n-1]
			s.Checks[i].Last = &last
		}
	}
	return nil
}

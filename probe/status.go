package probe

import (
	"fmt"
	"strconv"
	"strings"
)

// StatusSet is a set of HTTP status codes, written as a list of codes and
// ranges: "200", "200,204", "200-399", "200,204,300-399".
type StatusSet struct {
	ranges [][2]int // inclusive
	text   string
}

// DefaultStatus is the kubelet's rule: 200 <= code < 400 passes.
const DefaultStatus = "200-399"

// ParseStatusSet reads a list of codes and ranges. Codes are 100 to 599.
func ParseStatusSet(s string) (StatusSet, error) {
	set := StatusSet{text: s}
	if strings.TrimSpace(s) == "" {
		return StatusSet{}, fmt.Errorf("status set %q is empty", s)
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		from, err := statusCode(lo)
		if err != nil {
			return StatusSet{}, fmt.Errorf("status set %q: %w", s, err)
		}
		to := from
		if isRange {
			if to, err = statusCode(hi); err != nil {
				return StatusSet{}, fmt.Errorf("status set %q: %w", s, err)
			}
			if to < from {
				return StatusSet{}, fmt.Errorf("status set %q: range %s runs backwards", s, part)
			}
		}
		set.ranges = append(set.ranges, [2]int{from, to})
	}
	return set, nil
}

func statusCode(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 100 || n > 599 {
		return 0, fmt.Errorf("%q is not an HTTP status code (100-599)", s)
	}
	return n, nil
}

// Contains reports whether code is in the set.
func (s StatusSet) Contains(code int) bool {
	for _, r := range s.ranges {
		if code >= r[0] && code <= r[1] {
			return true
		}
	}
	return false
}

// String returns the set as it was written.
func (s StatusSet) String() string { return s.text }

package logwatch

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

func TestAPatternsNeedleIsTextEveryMatchHolds(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		needle  string
		fold    bool
		literal bool
	}{
		{"Listening on", "Listening on", false, true},
		{"^Listening on$", "Listening on", false, false},
		{`Listening on :\d+`, "Listening on :", false, false},
		{`^\S+ ERROR`, " ERROR", false, false},
		{"level=(error|fatal)", "level=", false, false},
		{"(?i)error", "error", true, false},
		{"(?i)Listening ON", "tening on", true, false}, // the s may be a long s
		{"(?i)OIDC provider setup failed", "oidc provider ", true, false},
		{"(?i:error) timeout", " timeout", false, false},
		{"(?i)ks", "", false, false},
		{"error|fatal", "", false, false},
		{"[0-9]+", "", false, false},
		{"(fail)?ed", "ed", false, false},
	} {
		m := newMatcher(regexp.MustCompile(tc.pattern))
		if string(m.needle) != tc.needle || m.fold != tc.fold || m.literal != tc.literal {
			t.Errorf("%s: needle %q, fold %v, literal %v; want %q, %v, %v", tc.pattern, m.needle, m.fold, m.literal, tc.needle, tc.fold, tc.literal)
		}
	}
}

// Whatever shortcut a matcher takes, it finds the lines that the regular
// expression, run on each line, finds.
func TestAMatcherFindsWhatTheRegularExpressionFinds(t *testing.T) {
	patterns := []string{
		"Listening on", "^Listening on$", `Listening on :\d+`, "(?i)listening ON", "(?i)^error$",
		"(?i)ks", "(?i)K", "error|fatal", "(?i)oidc (provider|client) setup failed", `^\S+ ERROR`,
		"^$", "a*", `\n`, "on\r", `(?i)é`,
	}
	words := []string{
		"Listening", "listening", "LISTENING", "on", "ON", ":8080", "error", "ERROR", "Error", "fatal",
		"oidc", "OIDC", "provider", "client", "setup", "failed", "ks", "KS", "\u212a", "\u017f", "é", "É",
		" ", " ", " ", "\n", "\n", "\r\n", "\r", "2026-01-01T00:00:00Z", "",
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		m := newMatcher(re)
		for range 500 {
			var b strings.Builder
			for range rnd.IntN(30) {
				b.WriteString(words[rnd.IntN(len(words))])
			}
			lines := []byte(b.String())
			var first, last []byte
			var found bool
			for rest := lines; len(rest) > 0; {
				line := rest
				if i := bytes.IndexByte(rest, '\n'); i >= 0 {
					line, rest = bytes.TrimSuffix(rest[:i], []byte("\r")), rest[i+1:]
				} else {
					rest = nil
				}
				if re.Match(line) {
					if !found {
						first = line
					}
					last, found = line, true
				}
			}
			t1 := text{}
			t1.set(lines)
			gotFirst, ok1 := m.find(&t1, false)
			gotLast, ok2 := m.find(&t1, true)
			if ok1 != found || ok2 != found || !bytes.Equal(gotFirst, first) || !bytes.Equal(gotLast, last) {
				t.Fatalf("%s in %q: first %q %v, last %q %v; want %q, %q, %v", p, lines, gotFirst, ok1, gotLast, ok2, first, last, found)
			}
		}
	}
}

func TestLowerASCIILowersASCIILettersAndNothingElse(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for n := range 100 {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(rnd.IntN(256))
		}
		want := make([]byte, n)
		for i, c := range src {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			want[i] = c
		}
		got := make([]byte, n)
		lowerASCII(got, src)
		if !bytes.Equal(got, want) {
			t.Fatalf("lowerASCII(%q) = %q, want %q", src, got, want)
		}
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	got := make([]byte, 256)
	lowerASCII(got, all)
	for i, c := range got {
		if want := byte(i) | 0x20*byte(boolInt('A' <= i && i <= 'Z')); c != want {
			t.Errorf("byte %#x lowered to %#x, want %#x", i, c, want)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

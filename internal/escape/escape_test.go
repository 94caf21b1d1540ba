package escape

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTextEscapesWhatATerminalWouldActOnAndKeepsLines(t *testing.T) {
	for _, c := range []struct{ in, text, line string }{
		{"plain text, 100% ok", "plain text, 100% ok", "plain text, 100% ok"},
		{"two\nlines\twith a tab", "two\nlines\twith a tab", `two\nlines\twith a tab`},
		{"crlf\r\nline", "crlf\nline", `crlf\r\nline`},
		{"ok\rFAILED", `ok\rFAILED`, `ok\rFAILED`},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\atitle`, `\x1b]0;pwned\atitle`},
		{"\x1b[2J\x1b[Hcleared", `\x1b[2J\x1b[Hcleared`, `\x1b[2J\x1b[Hcleared`},
		{"nul\x00here", `nul\x00here`, `nul\x00here`},
		{"abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"zero\u200bwidth, del\x7f, c1\u009b", `zero\u200bwidth, del\x7f, c1\u009b`, `zero\u200bwidth, del\x7f, c1\u009b`},
		{"sep\u2028line", `sep\u2028line`, `sep\u2028line`},
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`, `bad \xff\xfe utf-8`},
		{"kept: é ü 日本 \u00a0 �", "kept: é ü 日本 \u00a0 �", "kept: é ü 日本 \u00a0 �"},
		{`a literal \x1b stays`, `a literal \x1b stays`, `a literal \x1b stays`},
	} {
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Text(Text(c.in)); got != Text(c.in) {
			t.Errorf("Text of Text(%q) = %q, changed again", c.in, got)
		}
	}
}

func TestCutSplitsNeitherARuneNorAnEscape(t *testing.T) {
	s := Text("ab\u202ecd\x1bé\rz")
	if s != `ab\u202ecd\x1bé\rz` {
		t.Fatalf("Text = %q", s)
	}
	for n, want := range map[int]string{
		0:  "",
		2:  "ab",
		3:  "ab", // inside \u202e
		7:  "ab", // its last byte
		8:  `ab\u202e`,
		10: `ab\u202ecd`,
		13: `ab\u202ecd`, // inside \x1b
		14: `ab\u202ecd\x1b`,
		15: `ab\u202ecd\x1b`, // inside é
		16: `ab\u202ecd\x1bé`,
		17: `ab\u202ecd\x1bé`, // inside \r
		18: `ab\u202ecd\x1bé\r`,
		19: `ab\u202ecd\x1bé\rz`,
		99: `ab\u202ecd\x1bé\rz`,
	} {
		if got := s[:Cut(s, n)]; got != want {
			t.Errorf("cut at %d = %q, want %q", n, got, want)
		}
	}
	long := Text(strings.Repeat("\U0001F600\U000E0001", 50))
	for n := range len(long) + 1 {
		got := long[:Cut(long, n)]
		if !utf8.ValidString(got) || len(got) > n || strings.HasSuffix(got, `\`) ||
			strings.Contains(got[max(0, len(got)-9):], `\U`) && !strings.HasSuffix(got, `\U000e0001`) {
			t.Fatalf("cut at %d = …%q", n, got[max(0, len(got)-12):])
		}
	}
}

func TestPairsAreOneLineSortedAndQuotedWhereAValueNeedsIt(t *testing.T) {
	got := Pairs(map[string]string{"path": "/etc/app.conf", "generation": "4", "note": "two words", "empty": "",
		"eq": "a=b", "q": `say "hi"`, "nl": "one\ntwo", "esc": "\x1b[2J", "rtl": "abc\u202e"})
	want := `empty="" eq="a=b" esc="\x1b[2J" generation=4 nl="one\ntwo" note="two words" path=/etc/app.conf q="say \"hi\"" rtl="abc\u202e"`
	if got != want {
		t.Errorf("Pairs:\n got %s\nwant %s", got, want)
	}
	if got := Pairs(nil); got != "" {
		t.Errorf("Pairs(nil) = %q", got)
	}
}

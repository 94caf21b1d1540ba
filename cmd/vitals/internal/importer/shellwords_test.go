package importer

import (
	"reflect"
	"testing"
)

func TestSplitWordsSplitsACommandAsPebbleDoes(t *testing.T) {
	for _, tt := range []struct {
		line string
		want []string
	}{
		{"", []string{}},
		{"   ", []string{}},
		{"pg_isready", []string{"pg_isready"}},
		{"  test  -f\t/tmp/ready\n", []string{"test", "-f", "/tmp/ready"}},
		// Quotes keep spaces, and join the word around them.
		{`/bin/sh -c "pg_isready --host db --quiet"`, []string{"/bin/sh", "-c", "pg_isready --host db --quiet"}},
		{`test -w '/data/media store'`, []string{"test", "-w", "/data/media store"}},
		{`--name="a b"c'd e'`, []string{"--name=a bcd e"}},
		{`a '' "" b`, []string{"a", "", "", "b"}},
		// Single quotes keep everything, backslashes too.
		{`echo 'a\b "c"'`, []string{"echo", `a\b "c"`}},
		// A backslash takes the next character as it is, inside double
		// quotes too (shlex, unlike a POSIX shell, keeps no backslash there).
		{`echo a\ b \"c\"`, []string{"echo", "a b", `"c"`}},
		{`echo "say \"hi\"" "a\b" "\\"`, []string{"echo", `say "hi"`, "ab", `\`}},
		{`echo \'`, []string{"echo", "'"}},
		// Nothing is expanded.
		{`sh -c "echo $HOME ~ *"`, []string{"sh", "-c", "echo $HOME ~ *"}},
		// A # that starts a word comments out the rest of the line; inside a
		// word it is a character.
		{"check --id=a#b # the rest\n--next", []string{"check", "--id=a#b", "--next"}},
		{`echo "#not a comment"`, []string{"echo", "#not a comment"}},
		{"# all comment", []string{}},
		{"héllo wörld", []string{"héllo", "wörld"}},
	} {
		got, err := splitWords(tt.line)
		if err != nil || !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
}

func TestSplitWordsRefusesAnUnterminatedQuoteOrEscape(t *testing.T) {
	for line, want := range map[string]string{
		`sh -c "echo hi`:   `unterminated " quote`,
		`sh -c 'echo hi`:   `unterminated ' quote`,
		`echo "a\"`:        `unterminated " quote`,
		`echo "a\`:         `unterminated " quote`,
		`echo it's`:        `unterminated ' quote`,
		`echo trailing\`:   `a \ at the end escapes nothing`,
		`"`:                `unterminated " quote`,
		`# '` + "\n" + `'`: `unterminated ' quote`,
	} {
		got, err := splitWords(line)
		if err == nil || err.Error() != want {
			t.Errorf("splitWords(%q) = %q, %v; want the error %q", line, got, err, want)
		}
	}
}

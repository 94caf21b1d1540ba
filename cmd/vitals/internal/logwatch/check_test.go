package logwatch

import (
	"context"
	"errors"
	"io"
	"regexp/syntax"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health/healthtest"
)

func TestNewCheckSaysWhatIsWrongWithASpec(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   Spec
		want   string
		fields []string // the fields of the *FieldErrors, in order
	}{
		{"no pattern", Spec{Stream: Stdout}, "give pattern, fail-pattern or both", nil},
		{"a bad pattern", Spec{Pattern: "Listening (on"},
			"pattern \"Listening (on\": error parsing regexp: missing closing ): `Listening (on`", []string{"pattern"}},
		{"a bad fail-pattern", Spec{FailPattern: "a**"},
			"fail-pattern \"a**\": error parsing regexp: invalid nested repetition operator: `**`", []string{"fail-pattern"}},
		{"a window without a fail-pattern", Spec{Pattern: "up", Window: time.Second},
			"window applies only with fail-pattern", []string{"window"}},
		{"a negative window", Spec{FailPattern: "down", Window: -time.Second},
			"window -1s is negative", []string{"window"}},
		{"an unknown stream", Spec{Pattern: "up", Stream: "both"},
			`stream "both" is not stdout or stderr (leave it out for both)`, []string{"stream"}},
		{"everything at once", Spec{Pattern: "(", FailPattern: ")", Stream: "out"},
			"pattern \"(\": error parsing regexp: missing closing ): `(`\n" +
				"fail-pattern \")\": error parsing regexp: unexpected ): `)`\n" +
				`stream "out" is not stdout or stderr (leave it out for both)`,
			[]string{"pattern", "fail-pattern", "stream"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCheck("x", tc.spec, nil)
			if err == nil {
				t.Fatalf("NewCheck(%+v) = %v, want an error", tc.spec, c)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n%s\nwant\n%s", err, tc.want)
			}
			var fields []string
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				if fe, ok := errors.AsType[*FieldError](e); ok {
					fields = append(fields, fe.Field)
				}
			}
			if strings.Join(fields, ",") != strings.Join(tc.fields, ",") {
				t.Errorf("fields %q, want %q", fields, tc.fields)
			}
		})
	}
	// A bad pattern's error wraps the regexp package's.
	_, err := NewCheck("x", Spec{Pattern: "("}, nil)
	if _, ok := errors.AsType[*syntax.Error](err); !ok {
		t.Errorf("%v does not wrap a *syntax.Error", err)
	}
}

func TestNewCheckFillsInTheDefaultWindow(t *testing.T) {
	c, err := NewCheck("errors", Spec{FailPattern: "failed"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Spec(); got != (Spec{FailPattern: "failed", Window: time.Minute}) || c.Name() != "errors" {
		t.Errorf("check %q with spec %+v", c.Name(), got)
	}
}

// A step shows lines to the checks, then moves the clock, then runs the
// check: "" is a pass.
type step struct {
	stdout, stderr string
	reset          bool
	advance        time.Duration
	want           string
}

func TestALogCheckAnswersFromTheLinesItSaw(t *testing.T) {
	const (
		notYet     = `no line matching "Listening on" yet`
		failedLine = "OIDC provider setup failed: 401 Unauthorized"
	)
	failed := `line matching "OIDC provider setup failed" in the last 30s: ` + failedLine
	started := Spec{Pattern: "Listening on"}
	setupErrors := Spec{FailPattern: "OIDC provider setup failed", Window: 30 * time.Second}
	for _, tc := range []struct {
		name  string
		spec  Spec
		steps []step
	}{
		{"a pattern fails until its line is printed, then passes", started, []step{
			{want: notYet},
			{stdout: "starting\nloading config\n", want: notYet},
			{stdout: "INFO Listening on :8080\n", want: ""},
			{stdout: "serving\n", advance: time.Hour, want: ""},
		}},
		{"a pattern matches a line among many read at once", started, []step{
			{stdout: "a\nb\nListening on :8080\nc\n", want: ""},
		}},
		{"a pattern matches a last line without a newline", started, []step{
			{stdout: "starting\nListening on :8080", want: ""},
		}},
		{"a pattern is matched against the line without its \\r\\n", Spec{Pattern: "^Listening on :8080$"}, []step{
			{stdout: "Listening on :8080\r\n", want: ""},
		}},
		{"a pattern never matches across lines", Spec{Pattern: "Listening on"}, []step{
			{stdout: "Listening\non\n", want: notYet},
		}},
		{"a fail-pattern passes until its line, then fails for its window", setupErrors, []step{
			{stderr: "starting\n", want: ""},
			{stderr: failedLine + "\n", want: failed},
			{advance: 250 * time.Millisecond, want: failed},
			{advance: 12 * time.Second, want: failed},
			{advance: 17*time.Second + 749*time.Millisecond, want: failed},
			{advance: time.Millisecond, want: ""}, // 30s: the window is over
		}},
		{"a later failing line starts the window again, and shows", setupErrors, []step{
			{stderr: failedLine + "\n", advance: 20 * time.Second, want: failed},
			{stderr: "OIDC provider setup failed: timeout\nok\n", advance: 20 * time.Second,
				want: `line matching "OIDC provider setup failed" in the last 30s: OIDC provider setup failed: timeout`},
			{advance: 10 * time.Second, want: ""},
		}},
		{"of failing lines read at once, the last shows", setupErrors, []step{
			{stderr: failedLine + "\nOIDC provider setup failed: second\nnot this\n",
				want: `line matching "OIDC provider setup failed" in the last 30s: OIDC provider setup failed: second`},
		}},
		{"the default window is a minute", Spec{FailPattern: "OIDC provider setup failed"}, []step{
			{stderr: failedLine + "\n", advance: 59 * time.Second, want: `line matching "OIDC provider setup failed" in the last 1m0s: ` + failedLine},
			{advance: time.Second, want: ""},
		}},
		{"with both, both must hold", Spec{Pattern: "Listening on", FailPattern: "OIDC provider setup failed", Window: 30 * time.Second}, []step{
			{want: notYet},
			{stderr: failedLine + "\n", want: notYet + "; " + failed},
			{stdout: "Listening on :8080\n", advance: 10 * time.Second, want: failed},
			{advance: 20 * time.Second, want: ""},
		}},
		{"a stdout check does not read stderr", Spec{Pattern: "Listening on", Stream: Stdout}, []step{
			{stderr: "Listening on :8080\n", want: notYet},
			{stdout: "Listening on :8080\n", want: ""},
		}},
		{"a stderr check does not read stdout", Spec{FailPattern: "OIDC provider setup failed", Stream: Stderr}, []step{
			{stdout: failedLine + "\n", want: ""},
			{stderr: failedLine + "\n", want: `line matching "OIDC provider setup failed" in the last 1m0s: ` + failedLine},
		}},
		{"a check of both streams reads both", Spec{Pattern: "Listening on"}, []step{
			{stderr: "Listening on :8080\n", want: ""},
		}},
		{"reset forgets the pattern's line", started, []step{
			{stdout: "Listening on :8080\n", want: ""},
			{reset: true, want: notYet},
			{stdout: "Listening on :8081\n", want: ""},
		}},
		{"reset forgets the failing line", setupErrors, []step{
			{stderr: failedLine + "\n", want: failed},
			{reset: true, want: ""},
		}},
		{"a long failing line shows its first 200 bytes", Spec{FailPattern: "^failed"}, []step{
			{stderr: "failed " + strings.Repeat("x", 300) + "\n",
				want: `line matching "^failed" in the last 1m0s: failed ` + strings.Repeat("x", 193) + "…"},
		}},
		{"a failing line is cut before a character, not inside one", Spec{FailPattern: "^failed"}, []step{
			{stderr: "failed " + strings.Repeat("x", 192) + "é\n",
				want: `line matching "^failed" in the last 1m0s: failed ` + strings.Repeat("x", 192) + "…"},
		}},
		{"control characters of a failing line show as escapes", Spec{FailPattern: "failed"}, []step{
			{stderr: "\x1b[31mERROR\x1b[0m\tsetup failed \xff\x00\n",
				want: `line matching "failed" in the last 1m0s: \x1b[31mERROR\x1b[0m` + "\t" + `setup failed \xff\x00`},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := healthtest.NewClock(time.Time{})
			c, err := NewCheck("c", tc.spec, clock)
			if err != nil {
				t.Fatal(err)
			}
			s := New([]*Check{c}, nil)
			for i, st := range tc.steps {
				if st.reset {
					s.Reset()
				}
				copyString(t, s, st.stdout, Stdout)
				copyString(t, s, st.stderr, Stderr)
				clock.Advance(st.advance)
				got := ""
				if err := c.Check(context.Background()); err != nil {
					got = err.Error()
				}
				if got != st.want {
					t.Fatalf("step %d: check says\n%q\nwant\n%q", i, got, st.want)
				}
			}
		})
	}
}

func copyString(t *testing.T, s *Streams, text, stream string) {
	t.Helper()
	if text == "" {
		return
	}
	if err := s.Copy(io.Discard, strings.NewReader(text), stream); err != nil {
		t.Fatal(err)
	}
}

func TestAPassingLogCheckSaysWhy(t *testing.T) {
	c, err := NewCheck("c", Spec{Pattern: "Listening on", FailPattern: "failed"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	copyString(t, New([]*Check{c}, nil), "Listening on :8080\n", Stdout)
	obs, err := c.Measure(context.Background())
	if want := `a line matched "Listening on"; no line matching "failed" in the last 1m0s`; err != nil || obs.Message != want {
		t.Errorf("Measure = %+v, %v; want the message %q", obs, err, want)
	}
}

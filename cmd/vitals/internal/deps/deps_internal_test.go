package deps

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestHideReplacesEveryFormOfASecret(t *testing.T) {
	s := secrets(nil).add("p@ss/w rd").add("").add("tok3n")
	for _, tc := range []struct{ in, want string }{
		{"password p@ss/w rd refused", "password xxxxx refused"},
		{`cannot parse "postgres://u:p%40ss%2Fw%20rd@h"`, `cannot parse "postgres://u:xxxxx@h"`},
		{"query password=p%40ss%2Fw+rd", "query password=xxxxx"},
		{"nats://tok3n@h: tok3n expired", "nats://xxxxx@h: xxxxx expired"},
		{"nothing secret", "nothing secret"},
	} {
		cause := fmt.Errorf("%s: %w", tc.in, context.DeadlineExceeded)
		got := s.hide(cause)
		if want := tc.want + ": " + context.DeadlineExceeded.Error(); got.Error() != want {
			t.Errorf("hide(%q) = %q, want %q", cause, got, want)
		}
		if !errors.Is(got, context.DeadlineExceeded) {
			t.Errorf("hide(%q) does not unwrap to its cause", cause)
		}
	}
	if s.hide(nil) != nil {
		t.Error("hide(nil) is not nil")
	}
}

package probe_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/vitals-dev/vitals/probe"
)

// A spec that cannot be built says its kind, and says what is wrong without
// it to whoever names the kind already (a configuration error at
// checks.NAME.KIND), with no parsing of its text.
func TestASpecErrorSaysItsKindAndWhatIsWrongWithoutIt(t *testing.T) {
	_, err := probe.TCP(probe.TCPSpec{})
	var se *probe.SpecError
	if !errors.As(err, &se) || se.Kind != "tcp" {
		t.Fatalf("probe.TCP of no address: %v, want a *probe.SpecError of tcp", err)
	}
	if got, want := probe.WithoutKind(err), se.Err.Error(); got != want || err.Error() != "tcp probe: "+want {
		t.Errorf("WithoutKind %q, Error %q; want %q and %q", got, err.Error(), want, "tcp probe: "+want)
	}
	wrapped := probe.Invalid("file", "path %q: %w", "/x", fs.ErrNotExist)
	if !errors.Is(wrapped, fs.ErrNotExist) || probe.WithoutKind(wrapped) != `path "/x": file does not exist` {
		t.Errorf("Invalid with %%w: %v, want its cause kept and said without the kind", wrapped)
	}
	if plain := errors.New("other"); probe.WithoutKind(plain) != "other" {
		t.Errorf("WithoutKind of an error that is no SpecError changed its text")
	}
}

// Package testenv says what the tests of vitals's modules do when this
// machine lacks what a test needs (root, a namespace, a program such as
// curl or podman): skip, saying what is missing, as go test does on a
// developer's machine; or, under CI (the variable CI set, as hack/test.sh and
// .ci/run set it), fail, since a test that skips there is a test not run.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// Missing ends t for want of what the message says: a skip, or a failure
// under CI.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI is set: the test must run; hack/test.sh as root installs and provides what the tests need)", msg)
	}
	t.Skip(msg)
}

// NeedRoot ends t, as Missing does, unless the test runs as root; why says
// what root is needed for.
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "%s needs root", why)
	}
}

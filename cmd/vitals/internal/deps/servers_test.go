package deps_test

import (
	"os"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps/depstest"
)

// The tests run real servers (package depstest); those that several tests
// share are stopped once the tests have run.
func TestMain(m *testing.M) {
	code := m.Run()
	depstest.StopShared()
	os.Exit(code)
}

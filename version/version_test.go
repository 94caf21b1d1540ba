package version

import "testing"

func TestAWorkTreeBuildIsDev(t *testing.T) {
	// A test binary is built from the work tree, not from a tagged module.
	if Version != "dev" || fromBuildInfo() != "dev" {
		t.Fatalf("Version %q, want dev", Version)
	}
}

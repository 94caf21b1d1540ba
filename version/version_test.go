package version

import (
	"strings"
	"testing"
)

func TestTheVersionIsDevOrAModuleVersion(t *testing.T) {
	// A build from a work tree says dev; a stamped one says v….
	if Version != "dev" && !strings.HasPrefix(Version, "v") || Version != fromBuildInfo() {
		t.Fatalf("Version %q (from build info %q), want dev or v…", Version, fromBuildInfo())
	}
}

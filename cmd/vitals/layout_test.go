package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The binary's house: the commands only call the agent, which builds and
// wires the parts; config is the file's data, which the parts translate.
// (The importer's own rule is internal/importer's test; the length of a
// function, internal/agent's.)

const internal = "github.com/vitals-dev/vitals/cmd/vitals/internal/"

// forbidden says, for a package, the imports it must not have.
var forbidden = map[string][]string{
	internal + "cli": {internal + "hooks", internal + "kubereport", internal + "logwatch", internal + "metrics",
		internal + "supervise", "github.com/prometheus/client_golang/prometheus", "google.golang.org/grpc", "k8s.io/klog/v2"},
	internal + "config": {internal + "api", internal + "deps", internal + "hooks", internal + "logwatch",
		internal + "supervise", "github.com/vitals-dev/vitals/grpchealth", internal + "kubereport"},
	// The management API and the status page are parts side by side: what
	// both write of the Monitor is below them, in wire.
	internal + "api":  {internal + "agent", internal + "ui"},
	internal + "wire": {internal + "agent", internal + "api", internal + "ui"},
	// The agent's page and the fleet's are parts side by side: what they
	// share is below them, in webpage, which knows neither.
	internal + "ui":      {internal + "agent", internal + "api", internal + "servers", internal + "fleet"},
	internal + "fleet":   {internal + "agent", internal + "ui", internal + "cli"},
	internal + "webpage": {internal + "agent", internal + "ui", internal + "fleet", internal + "wire"},
}

func TestEachPartImportsOnlyWhatItsPlaceAllows(t *testing.T) {
	for pkg, not := range forbidden {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		imports := strings.Fields(string(out))
		for _, p := range not {
			// A package under p (prometheus/promhttp, grpc/health) counts as p.
			if slices.ContainsFunc(imports, func(i string) bool { return i == p || strings.HasPrefix(i, p+"/") }) {
				t.Errorf("%s imports %s", strings.TrimPrefix(pkg, internal), p)
			}
		}
	}
}

//go:build vitals_probe

package target

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestTheProbeBuildSaysK8sTargetsAreInTheFullBuild(t *testing.T) {
	_, err := Build("k8s://deployment/api", options(t, "--namespace", "shop"))
	if err == nil || !strings.Contains(err.Error(), "k8s:// targets are in the full build of vitals") {
		t.Fatalf("%v", err)
	}
	if _, err := KindOf("ftp://x/"); err == nil || strings.Contains(err.Error(), "k8s") {
		t.Errorf("the probe build lists k8s among its schemes: %v", err)
	}
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	DefineFlags(f)
	if !f.Lookup("namespace").Hidden || f.Parse([]string{"-n", "shop"}) != nil {
		t.Error("-n is shown, or not read, in the probe build")
	}
}

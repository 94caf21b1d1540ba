//go:build vitals_probe

package target

import (
	"strings"
	"testing"
)

// The probe build knows the dependencies' schemes, to say where their
// targets are, and lists none of them among its own.
func TestTheProbeBuildSaysDependencyTargetsAreInTheFullBuild(t *testing.T) {
	for target, scheme := range map[string]string{
		"postgres://app:pw@db/app": "postgres", "POSTGRESQL://db/app": "postgresql", "rediss://cache:6380": "rediss",
		"amqp://mq:5672/": "amqp", "nats://bus:4222": "nats",
	} {
		_, err := Build(target, Options{})
		if want := scheme + ":// targets are in the full build of vitals"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Build(%q): %v, want %q", target, err, want)
		}
	}
	if _, err := KindOf("ftp://x/"); err == nil || strings.Contains(err.Error(), "postgres") {
		t.Errorf("the probe build lists postgres among its schemes: %v", err)
	}
}

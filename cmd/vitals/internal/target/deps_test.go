//go:build !vitals_probe

package target

import (
	"strings"
	"testing"
)

// A dependency's URL builds its kind's probe, which shows the URL without
// its password; building it connects to nothing (the first run does).
func TestTheFullBuildHasATargetForEveryDependencyKind(t *testing.T) {
	for _, tt := range []struct{ target, kind, want string }{
		{"postgres://app:s3cret-pw@db:5432/app?sslmode=disable", "postgres", "postgres postgres://app:xxxxx@db:5432/app?sslmode=disable"},
		{"postgresql://app@db/app?password=s3cret-pw", "postgres", "postgres postgresql://app@db/app?password=xxxxx"},
		{"redis://:s3cret-pw@cache:6379/0", "redis", "redis redis://:xxxxx@cache:6379/0"},
		{"rediss://default:s3cret-pw@cache:6380", "redis", "redis rediss://default:xxxxx@cache:6380"},
		{"amqp://vitals:s3cret-pw@mq:5672/", "amqp", "amqp amqp://vitals:xxxxx@mq:5672/"},
		{"amqps://vitals:s3cret-pw@mq:5671/prod", "amqp", "amqp amqps://vitals:xxxxx@mq:5671/prod"},
		{"nats://vitals:s3cret-pw@bus:4222", "nats", "nats nats://vitals:xxxxx@bus:4222"},
		{"nats://s3cret-token@bus:4222", "nats", "nats nats://xxxxx@bus:4222"},
	} {
		kind, err := KindOf(tt.target)
		if err != nil || kind != tt.kind {
			t.Errorf("KindOf(%q) = %q, %v; want %q", tt.target, kind, err, tt.kind)
		}
		p, err := Build(tt.target, Options{})
		if err != nil {
			t.Errorf("Build(%q): %v", tt.target, err)
			continue
		}
		if p.Kind() != tt.kind || p.String() != tt.want {
			t.Errorf("Build(%q) = %s %q, want %s %q", tt.target, p.Kind(), p, tt.kind, tt.want)
		}
		if err := p.Close(); err != nil {
			t.Errorf("%s: Close before any run: %v", tt.target, err)
		}
	}
	for target, want := range map[string]string{
		"nats://a:1,b:2":              "nats probe: url: one server",
		"redis://cache:6379/x":        "redis probe: url",
		"postgres://db:5432/app?x=%z": "postgres probe: url",
	} {
		if _, err := Build(target, Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Build(%q): %v, want %q", target, err, want)
		}
	}
}

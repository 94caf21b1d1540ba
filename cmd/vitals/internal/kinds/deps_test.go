//go:build !vitals_probe

package kinds_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

// The four dependency kinds are in the table: a vitals.yaml names them, and
// the table builds their probes.
func TestAConfigurationBuildsTheDependencyKinds(t *testing.T) {
	env := map[string]string{"PGPASSWORD": "pg-s3cret", "MQPASSWORD": "mq-s3cret"}
	yaml := strings.Join([]string{
		"checks:",
		"  db:",
		"    postgres: {url: 'postgres://vitals:${PGPASSWORD}@127.0.0.1:5432/app'}",
		"  cache:",
		"    level: live",
		"    redis: {url: 'redis://:r-s3cret@127.0.0.1:6379/0'}",
		"  mq:",
		"    amqp:",
		"      url: amqp://st2:${MQPASSWORD}@rabbitmq:5672/",
		"  bus:",
		"    nats: {url: 'nats://app:n-s3cret@nats:4222'}",
	}, "\n")
	c, err := config.Parse("vitals.yaml", []byte(yaml), func(k string) (string, bool) { v, ok := env[k]; return v, ok }, kinds.All)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"db postgres postgres postgres://vitals:xxxxx@127.0.0.1:5432/app",
		"cache redis redis redis://:xxxxx@127.0.0.1:6379/0",
		"mq amqp amqp amqp://st2:xxxxx@rabbitmq:5672/",
		"bus nats nats nats://app:xxxxx@nats:4222",
	}
	var got []string
	for _, ch := range c.Checks {
		checker, err := kinds.All.Build(ch, kinds.Env{})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %v", ch.Name, ch.Kind, checker))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("checks\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestAConfigurationWithABadDependencyURLSaysWhere(t *testing.T) {
	yaml := strings.Join([]string{
		"checks:",
		"  db:",
		"    postgres: {}",
		"  cache:",
		"    redis: {url: 'http://:s3cret@cache'}",
		"  mq:",
		"    amqp: {url: 'amqp://h', vhost: x}",
	}, "\n")
	_, err := config.Parse("vitals.yaml", []byte(yaml), func(string) (string, bool) { return "", false }, kinds.All)
	want := strings.Join([]string{
		`vitals.yaml:3:15: checks.db.postgres: url is required (postgres://…)`,
		`vitals.yaml:5:12: checks.cache.redis: url: scheme "http" is not redis, rediss or unix`,
		`vitals.yaml:7:29: checks.mq.amqp.vhost: unknown field "vhost" (want min-consumers, ping, queue, url)`,
	}, "\n")
	if err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
}

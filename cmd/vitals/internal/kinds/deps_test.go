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

// A dependency's URL with a port no server listens on, or written without
// //, is refused as the file is loaded, at its check, its password unsaid.
func TestADependencyURLWithABadPortOrNoSlashesFailsAtLoad(t *testing.T) {
	yaml := strings.Join([]string{
		"checks:",
		"  cache:",
		"    redis: {url: 'redis://localhost:99999'}",
		"  mq:",
		"    amqp: {url: 'amqp://guest:s3cret@mq:70000/'}",
		"  bus:",
		"    nats: {url: 'nats://bus:0'}",
		"  session:",
		"    redis: {url: 'redis:app:s3cret@cache:6379'}",
	}, "\n")
	_, err := config.Parse("vitals.yaml", []byte(yaml), func(string) (string, bool) { return "", false }, kinds.All)
	want := strings.Join([]string{
		`vitals.yaml:3:12: checks.cache.redis: url: port "99999" is not a number from 1 to 65535`,
		`vitals.yaml:5:11: checks.mq.amqp: url: port "70000" is not a number from 1 to 65535`,
		`vitals.yaml:7:11: checks.bus.nats: url: port "0" is not a number from 1 to 65535`,
		`vitals.yaml:9:12: checks.session.redis: url: write redis://…`,
	}, "\n")
	if err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
}

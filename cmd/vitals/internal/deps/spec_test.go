package deps_test

import (
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/probe"
)

func build(kind, url string) (*probe.Prober, error) {
	switch kind {
	case "postgres":
		return deps.Postgres(deps.PostgresSpec{URL: url})
	case "redis":
		return deps.Redis(deps.RedisSpec{URL: url})
	case "amqp":
		return deps.AMQP(deps.AMQPSpec{URL: url})
	case "nats":
		return deps.NATS(deps.NATSSpec{URL: url})
	}
	panic("no kind " + kind)
}

func TestABadSpecFailsWhenBuiltWithoutShowingItsPassword(t *testing.T) {
	for _, tc := range []struct{ kind, url, want string }{
		{"postgres", "", `postgres probe: url is required (postgres://…)`},
		{"postgres", "http://db/app", `postgres probe: url: scheme "http" is not postgres or postgresql`},
		{"postgres", "host=db password=s3cret", `postgres probe: url: scheme "" is not postgres or postgresql`},
		{"postgres", "postgres://vitals:s3cret@db:x/app", `postgres probe: url: invalid port ":x" after host`},
		{"postgres", "postgres://vitals:s3cret@db/app?sslmode=bogus", "postgres probe: url: cannot parse `postgres://vitals:xxxxx@db/app?sslmode=bogus`: failed to configure TLS (sslmode is invalid)"},
		{"redis", "", `redis probe: url is required (redis://…)`},
		{"redis", "tcp://db:6379", `redis probe: url: scheme "tcp" is not redis, rediss or unix`},
		{"redis", "redis://:s3cret@db/x", `redis probe: url: redis: invalid database number: "x"`},
		{"amqp", "", `amqp probe: url is required (amqp://…)`},
		{"amqp", "amqp://guest:s3cret@db:notaport/", `amqp probe: url: invalid port ":notaport" after host`},
		{"amqp", "http://db", `amqp probe: url: scheme "http" is not amqp or amqps`},
		{"nats", "", `nats probe: url is required (nats://…)`},
		{"nats", "ws://db:8080", `nats probe: url: scheme "ws" is not nats or tls`},
		{"nats", "nats://u:s3cret@a:4222,nats://u:s3cret@b:4222", `nats probe: url: one server, as nats://HOST:PORT, with no path`},
	} {
		_, err := build(tc.kind, tc.url)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %q: error %v\nwant %s", tc.kind, tc.url, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s %q: error %q shows the password", tc.kind, tc.url, err)
		}
	}
}

func TestStringShowsTheTargetWithoutItsPassword(t *testing.T) {
	for _, tc := range []struct{ kind, url, want string }{
		{"postgres", "postgres://vitals:s3cret@127.0.0.1:5432/app", "postgres postgres://vitals:xxxxx@127.0.0.1:5432/app"},
		{"postgres", "postgresql://vitals@db/app?password=s3cret&sslmode=require", "postgres postgresql://vitals@db/app?password=xxxxx&sslmode=require"},
		{"postgres", "postgres://db/app", "postgres postgres://db/app"},
		{"redis", "redis://:s3cret@127.0.0.1:6379/0", "redis redis://:xxxxx@127.0.0.1:6379/0"},
		{"redis", "rediss://app:s3cret@cache:6380", "redis rediss://app:xxxxx@cache:6380"},
		{"redis", "unix://:s3cret@/run/redis.sock?db=2", "redis unix://:xxxxx@/run/redis.sock?db=2"},
		{"amqp", "amqp://st2:s3cret@rabbitmq:5672/st2", "amqp amqp://st2:xxxxx@rabbitmq:5672/st2"},
		{"amqp", "amqps://st2:s%2Fcret@mq/?cacertfile=/etc/ca.pem", "amqp amqps://st2:xxxxx@mq/?cacertfile=/etc/ca.pem"},
		{"nats", "nats://app:s3cret@nats:4222", "nats nats://app:xxxxx@nats:4222"},
		{"nats", "nats://s3cret@nats:4222", "nats nats://xxxxx@nats:4222"}, // a token
		{"nats", "tls://nats:4222", "nats tls://nats:4222"},
	} {
		p, err := build(tc.kind, tc.url)
		if err != nil {
			t.Errorf("%s %q: %v", tc.kind, tc.url, err)
			continue
		}
		if got := p.String(); got != tc.want {
			t.Errorf("%s %q: String() = %q, want %q", tc.kind, tc.url, got, tc.want)
		}
		if p.Kind() != tc.kind {
			t.Errorf("%s %q: Kind() = %q", tc.kind, tc.url, p.Kind())
		}
	}
}

// A URL written without // (redis:USER:PASSWORD@HOST) is no URL the client
// libraries read a host from: go-redis and amqp091-go would check
// localhost, with no password. It is refused, and its password not shown.
func TestAURLWithoutSlashesIsRefusedWithoutShowingItsPassword(t *testing.T) {
	for _, tc := range []struct{ kind, url, want string }{
		{"postgres", "postgres:vitals:s3cret@db/app", "postgres probe: url: write postgres://…"},
		{"redis", "redis:app:s3cret@cache:6379", "redis probe: url: write redis://…"},
		{"amqp", "amqp:st2:s3cret@rabbitmq:5672", "amqp probe: url: write amqp://…"},
		{"nats", "nats:app:s3cret@nats:4222", "nats probe: url: write nats://…"},
	} {
		p, err := build(tc.kind, tc.url)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %q: %v, error %v\nwant %s", tc.kind, tc.url, p, err, tc.want)
		}
	}
}

// A port is a number from 1 to 65535, as a tcp check's: another is refused
// when the check is built, as the file is loaded.
func TestAPortOutsideOneTo65535IsRefused(t *testing.T) {
	for _, tc := range []struct{ kind, url, want string }{
		{"redis", "redis://localhost:99999", `redis probe: url: port "99999" is not a number from 1 to 65535`},
		{"redis", "rediss://:s3cret@cache:0/1", `redis probe: url: port "0" is not a number from 1 to 65535`},
		{"amqp", "amqp://guest:s3cret@mq:65536/", `amqp probe: url: port "65536" is not a number from 1 to 65535`},
		{"nats", "nats://bus:99999", `nats probe: url: port "99999" is not a number from 1 to 65535`},
		{"postgres", "postgres://db:99999/app", `postgres probe: url: port "99999" is not a number from 1 to 65535`},
		{"postgres", "postgres://db:123456789012345678901/app", `postgres probe: url: port "123456789012345678901" is not a number from 1 to 65535`},
	} {
		p, err := build(tc.kind, tc.url)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %q: %v, error %v\nwant %s", tc.kind, tc.url, p, err, tc.want)
		}
	}
	for _, u := range []string{"redis://localhost:65535", "redis://localhost:1", "redis://localhost"} {
		if _, err := build("redis", u); err != nil {
			t.Errorf("%q: %v", u, err)
		}
	}
}

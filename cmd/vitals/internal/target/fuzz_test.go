package target

import (
	"strconv"
	"strings"
	"testing"
)

// R3 of the reliability suite: whatever a user types as a target, Build
// answers with a probe or an error that names the target — it never panics.
//
//	go test -fuzz FuzzBuild -fuzztime 10m ./cmd/vitals/internal/target/
func FuzzBuild(f *testing.F) {
	for _, seed := range []string{
		"http://localhost:8080/healthz", "https://[::1]:8443/readyz?verbose", "tcp://db:5432", "tcp://:0",
		"tls://example.com:443", "file:///config/peer1/peer1.conf", "file://host/x", "file:///a%3Fb",
		"dns://localhost", "dns://8.8.8.8/example.com?type=MX", "grpc://localhost:50051/readiness",
		"grpcs://[::1]:1/x/y", "k8s://deployment/api", "k8s://pods?selector=app%3Dweb", "", ":", "http:",
		"http://%zz", "HTTP://X", "tcp://host", "dns://?type=", "grpc://host:port/", "\x00://\xff",
		"postgres://app:pw@db/app?sslmode=disable", "redis://:pw@cache:6379/0", "amqps://mq/vhost", "nats://token@bus:4222",
		"nats://a,b", "log://app", "heartbeat",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, target string) {
		p, err := Build(target, Options{})
		switch {
		case err == nil && p.Prober == nil:
			t.Fatalf("Build(%q): no probe and no error", target)
		case err != nil && err.Error() == "":
			t.Fatalf("Build(%q): an empty error", target)
		case err != nil && !strings.Contains(err.Error(), strconv.Quote(target)) && !strings.Contains(err.Error(), "probe"):
			t.Fatalf("Build(%q): %q names neither the target nor the probe kind", target, err)
		}
	})
}

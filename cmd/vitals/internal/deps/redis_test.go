package deps_test

import (
	"os/exec"
	"regexp"
	"strconv"
	"syscall"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
)

// redisPassword is the test server's requirepass.
const redisPassword = "redis-Pw-4711"

var redisFixture = fixture{
	kind:    "redis",
	program: func(t *testing.T) string { return need(t, "redis-server") },
	start:   startRedis,
	url: func(addr, password string) string {
		return "redis://:" + password + "@" + addr + "/0"
	},
	password: redisPassword,
	build:    func(url string) (*deps.Prober, error) { return deps.Redis(deps.RedisSpec{URL: url}) },
	passes:   regexp.MustCompile(`^PONG in [0-9.]+(µs|ms)$`),
}

// startRedis runs redis-server with a password and nothing saved to disk.
func startRedis(program string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := serverDir("redis", nil)
	if err != nil {
		return nil, err
	}
	s := &server{name: "redis", addr: loopback(port), dir: dir, stopSignal: syscall.SIGTERM,
		command: func() *exec.Cmd {
			return exec.Command(program, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
				"--requirepass", redisPassword, "--save", "", "--appendonly", "no",
				"--dir", dir, "--daemonize", "no", "--logfile", "")
		}}
	if err := s.start(); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func TestARedisURLWithoutThePasswordTheServerWantsFailsAuthentication(t *testing.T) {
	t.Parallel()
	s := redisFixture.shared(t)
	p := redisFixture.prober(t, "redis://"+s.addr)
	mustFail(t, p, "run", "^authentication failed: NOAUTH ", redisPassword)
}

package deps_test

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/probe"
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
	build:    func(url string) (*probe.Prober, error) { return deps.Redis(deps.RedisSpec{URL: url}) },
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
		// Ready once redis itself answers: a port that accepts may be another
		// test's listener that took the port before redis bound it.
		ready: func(ctx context.Context) error { return answersPing(ctx, loopback(port)) },
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

// answersPing is nil once the server at addr answers PING as redis does:
// +PONG, or -NOAUTH while it wants a password.
func answersPing(ctx context.Context, addr string) error {
	c, err := dialUntil(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") && !strings.HasPrefix(line, "-NOAUTH") {
		return fmt.Errorf("%s answered PING with %q: not redis", addr, line)
	}
	return nil
}

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

// natsPassword is the test server's password for user vitals.
const natsPassword = "nats-Pw-4711"

var natsFixture = fixture{
	kind:    "nats",
	program: func(t *testing.T) string { return need(t, "nats-server", "/usr/sbin/nats-server") },
	start:   startNATS,
	url: func(addr, password string) string {
		return "nats://vitals:" + password + "@" + addr
	},
	password: natsPassword,
	build:    func(url string) (*probe.Prober, error) { return deps.NATS(deps.NATSSpec{URL: url}) },
	passes:   regexp.MustCompile(`^flush in [0-9.]+(µs|ms)$`),
}

// startNATS runs nats-server with a user and password.
func startNATS(program string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := serverDir("nats", nil)
	if err != nil {
		return nil, err
	}
	s := &server{name: "nats", addr: loopback(port), dir: dir, stopSignal: syscall.SIGTERM,
		// Ready once nats-server itself greets with INFO, not when any
		// listener on the port accepts.
		ready: func(ctx context.Context) error { return greetsWithINFO(ctx, loopback(port)) },
		command: func() *exec.Cmd {
			return exec.Command(program, "-a", "127.0.0.1", "-p", strconv.Itoa(port),
				"--user", "vitals", "--pass", natsPassword)
		}}
	if err := s.start(); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// greetsWithINFO is nil once the server at addr greets as NATS does.
func greetsWithINFO(ctx context.Context, addr string) error {
	c, err := dialUntil(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "INFO ") {
		return fmt.Errorf("%s greeted with %.40q: not NATS", addr, line)
	}
	return nil
}

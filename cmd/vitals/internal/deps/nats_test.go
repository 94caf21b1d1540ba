package deps_test

import (
	"os/exec"
	"regexp"
	"strconv"
	"syscall"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
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
	build:    func(url string) (*deps.Prober, error) { return deps.NATS(deps.NATSSpec{URL: url}) },
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

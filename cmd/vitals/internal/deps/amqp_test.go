package deps_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// amqpPassword is the test broker's password for its default user, vitals.
const amqpPassword = "amqp-Pw-4711"

var amqpFixture = fixture{
	kind:    "amqp",
	program: func(t *testing.T) string { return need(t, "/usr/lib/rabbitmq/bin/rabbitmq-server") },
	start:   startRabbitMQ,
	url: func(addr, password string) string {
		return "amqp://vitals:" + password + "@" + addr + "/"
	},
	password: amqpPassword,
	build:    func(url string) (*probe.Prober, error) { return deps.AMQP(deps.AMQPSpec{URL: url}) },
	passes:   regexp.MustCompile(`^channel open in [0-9.]+(µs|ms)$`),
}

// startRabbitMQ runs a private RabbitMQ node: its own node name, ports,
// Erlang port mapper (epmd) and files, with no plugin, and a default user
// with a password, which RabbitMQ creates on the node's first boot. The
// program is the script under /usr/lib/rabbitmq/bin, not the wrapper in
// /usr/sbin, which switches to the user rabbitmq and to the system's files.
func startRabbitMQ(program string) (*server, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	port, dist, epmd := ports[0], ports[1], ports[2]
	dir, err := serverDir("rabbitmq", nil)
	if err != nil {
		return nil, err
	}
	files := map[string]string{
		"rabbitmq-env.conf": "", // in place of /etc/rabbitmq's
		"enabled_plugins":   "[].\n",
		"rabbitmq.conf": "default_user = vitals\n" +
			"default_pass = " + amqpPassword + "\n" +
			"loopback_users = none\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	env := append(os.Environ(),
		"HOME="+dir, // where the Erlang cookie goes
		"RABBITMQ_CONF_ENV_FILE="+filepath.Join(dir, "rabbitmq-env.conf"),
		"RABBITMQ_CONFIG_FILE="+filepath.Join(dir, "rabbitmq.conf"),
		"RABBITMQ_ADVANCED_CONFIG_FILE="+filepath.Join(dir, "advanced.config"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(dir, "enabled_plugins"),
		"RABBITMQ_PLUGINS_EXPAND_DIR="+filepath.Join(dir, "plugins"),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(dir, "log"),
		"RABBITMQ_LOGS=-", // to its output, which goes to its log
		"RABBITMQ_NODENAME="+fmt.Sprintf("vitals-test-%d@localhost", port),
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT="+strconv.Itoa(port),
		"RABBITMQ_DIST_PORT="+strconv.Itoa(dist),
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1}",
		// A port mapper of its own, which the node starts and cleanup stops.
		"ERL_EPMD_PORT="+strconv.Itoa(epmd),
		"ERL_EPMD_ADDRESS=127.0.0.1",
	)
	s := &server{name: "rabbitmq", addr: loopback(port), dir: dir, stopSignal: syscall.SIGTERM,
		// Ready once RabbitMQ itself answers: a port that accepts may be
		// another test's listener that took the port while the node booted.
		ready: func(ctx context.Context) error { return speaksAMQP(ctx, loopback(port)) },
		command: func() *exec.Cmd {
			cmd := exec.Command(program)
			cmd.Env, cmd.Dir = env, dir
			return cmd
		}}
	s.cleanup = append(s.cleanup, func() {
		// The node started its port mapper as a daemon, outside its
		// process group: stop it by its port.
		kill := exec.Command("epmd", "-kill")
		kill.Env = env
		kill.Run()
	})
	if err := s.start(); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func TestAWrongAMQPPasswordWithinRabbitMQsDelaySaysWhyItTimedOut(t *testing.T) {
	t.Parallel()
	s := amqpFixture.shared(t)
	const wrong = "wrong-Pw-0815"
	p := amqpFixture.prober(t, amqpFixture.url(s.addr, wrong))
	r := health.Run(context.Background(), p, time.Second) // the default timeout, below RabbitMQ's 3s
	want := "timed out after 1s: AMQP handshake: the broker answered, then went silent (RabbitMQ takes 3s to refuse a wrong user or password): context deadline exceeded"
	if r.OK || r.Output != want {
		t.Fatalf("ok %v, output %q\nwant %q", r.OK, r.Output, want)
	}
}

// speaksAMQP is nil once the server at addr answers AMQP 0-9-1's protocol
// header with Connection.Start (a method frame on channel 0, class 10,
// method 10).
func speaksAMQP(ctx context.Context, addr string) error {
	c, err := dialUntil(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Write([]byte("AMQP\x00\x00\x09\x01")); err != nil {
		return err
	}
	var frame [11]byte // type, channel, size, class, method
	if _, err := io.ReadFull(c, frame[:]); err != nil {
		return err
	}
	if frame[0] != 1 || frame[1] != 0 || frame[2] != 0 || frame[7] != 0 || frame[8] != 10 || frame[9] != 0 || frame[10] != 10 {
		return fmt.Errorf("%s answered the AMQP header with % x: not an AMQP broker", addr, frame)
	}
	return nil
}

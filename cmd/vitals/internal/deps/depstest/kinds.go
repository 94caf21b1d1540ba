package depstest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// Kind is what a test needs to run a server of one dependency kind and
// log in to it.
type Kind struct {
	Name string // the kind: postgres, redis, amqp or nats
	// Program is the server's program; it skips or fails the test when it
	// is missing (see Need).
	Program func(t testing.TB) string
	// Start runs a server of the kind whose login is Password.
	Start    func(program string) (*Server, error)
	Password string
	// URL is the URL of the server at addr, logging in with password.
	URL func(addr, password string) string
}

// Shared is a server of the kind that the tests of the binary share.
func (k Kind) Shared(t testing.TB) *Server {
	t.Helper()
	program := k.Program(t)
	return Share(t, k.Name, func() (*Server, error) { return k.Start(program) })
}

// Private is a server of the kind for this test alone.
func (k Kind) Private(t testing.TB) *Server {
	t.Helper()
	program := k.Program(t)
	return Private(t, func() (*Server, error) { return k.Start(program) })
}

// The passwords of the servers that the kinds' Start run: each its own, so
// that a test sees which one an output shows.
const (
	PostgresPassword = "pg-Pw-4711"    // of the superuser vitals
	RedisPassword    = "redis-Pw-4711" // requirepass
	AMQPPassword     = "amqp-Pw-4711"  // of the broker's default user, vitals
	NATSPassword     = "nats-Pw-4711"  // of user vitals
)

// The kinds.
var (
	Postgres = Kind{
		Name:     "postgres",
		Program:  func(t testing.TB) string { return Need(t, "/usr/lib/postgresql/*/bin/postgres", "postgres") },
		Start:    startPostgres,
		Password: PostgresPassword,
		URL:      postgresURL,
	}
	Redis = Kind{
		Name:     "redis",
		Program:  func(t testing.TB) string { return Need(t, "redis-server") },
		Start:    startRedis,
		Password: RedisPassword,
		URL:      func(addr, password string) string { return "redis://:" + password + "@" + addr + "/0" },
	}
	AMQP = Kind{
		Name:     "amqp",
		Program:  func(t testing.TB) string { return Need(t, "/usr/lib/rabbitmq/bin/rabbitmq-server") },
		Start:    startRabbitMQ,
		Password: AMQPPassword,
		URL:      func(addr, password string) string { return "amqp://vitals:" + password + "@" + addr + "/" },
	}
	NATS = Kind{
		Name:     "nats",
		Program:  func(t testing.TB) string { return Need(t, "nats-server", "/usr/sbin/nats-server") },
		Start:    startNATS,
		Password: NATSPassword,
		URL:      func(addr, password string) string { return "nats://vitals:" + password + "@" + addr },
	}
)

func postgresURL(addr, password string) string {
	return "postgres://vitals:" + password + "@" + addr + "/postgres"
}

// startPostgres makes a cluster with initdb, whose superuser vitals logs in
// with a password (SCRAM), and runs postgres on it. PostgreSQL refuses to
// run as root: as root, both run as the user postgres, which the package
// postgresql creates.
func startPostgres(program string) (*Server, error) {
	bin := filepath.Dir(program)
	var owner *user.User
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("PostgreSQL cannot run as root, and there is no user postgres to run it: %w", err)
		}
		owner = u
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := serverDir("postgres", owner)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	pwfile := filepath.Join(dir, "password")
	if err := os.WriteFile(pwfile, []byte(PostgresPassword+"\n"), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	initdb := asUser(exec.Command(filepath.Join(bin, "initdb"), "--pgdata", data, "--username", "vitals",
		"--pwfile", pwfile, "--auth", "scram-sha-256", "--no-locale", "--encoding", "UTF8", "--no-sync"), owner)
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %w%s", err, lines(string(out)))
	}
	s := &Server{Name: "postgres", Addr: loopback(port), Dir: dir, stopSignal: syscall.SIGINT, // a fast shutdown
		command: func() *exec.Cmd {
			cmd := asUser(exec.Command(program, "-D", data, "-p", strconv.Itoa(port),
				"-c", "listen_addresses=127.0.0.1", "-k", data, // its unix socket in its own directory
				"-c", "fsync=off", "-c", "shared_buffers=16MB", "-c", "max_connections=30"), owner)
			cmd.Dir = dir
			return cmd
		}}
	// Its port opens before it accepts logins ("the database system is
	// starting up"): ready is a login.
	s.ready = func(ctx context.Context) error {
		c, err := pgconn.Connect(ctx, postgresURL(s.Addr, PostgresPassword)+"?sslmode=disable")
		if err != nil {
			return err
		}
		return c.Close(ctx)
	}
	if err := s.Start(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// startRedis runs redis-server with a password and nothing saved to disk.
func startRedis(program string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := serverDir("redis", nil)
	if err != nil {
		return nil, err
	}
	s := &Server{Name: "redis", Addr: loopback(port), Dir: dir, stopSignal: syscall.SIGTERM,
		// Ready once redis itself answers: a port that accepts may be another
		// test's listener that took the port before redis bound it.
		ready: func(ctx context.Context) error { return answersPing(ctx, loopback(port)) },
		command: func() *exec.Cmd {
			return exec.Command(program, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
				"--requirepass", RedisPassword, "--save", "", "--appendonly", "no",
				"--dir", dir, "--daemonize", "no", "--logfile", "")
		}}
	if err := s.Start(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
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

// startRabbitMQ runs a private RabbitMQ node: its own node name, ports,
// Erlang port mapper (epmd) and files, with no plugin, and a default user
// with a password, which RabbitMQ creates on the node's first boot. The
// program is the script under /usr/lib/rabbitmq/bin, not the wrapper in
// /usr/sbin, which switches to the user rabbitmq and to the system's files.
func startRabbitMQ(program string) (*Server, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	port, dist, epmd := ports[0], ports[1], ports[2]
	dir, err := serverDir("rabbitmq", nil)
	if err != nil {
		return nil, err
	}
	node := fmt.Sprintf("vitals-test-%d@localhost", port)
	files := map[string]string{
		"rabbitmq-env.conf": "", // in place of /etc/rabbitmq's
		"enabled_plugins":   "[].\n",
		"rabbitmq.conf": "default_user = vitals\n" +
			"default_pass = " + AMQPPassword + "\n" +
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
		"RABBITMQ_NODENAME="+node,
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT="+strconv.Itoa(port),
		"RABBITMQ_DIST_PORT="+strconv.Itoa(dist),
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1}",
		// A port mapper of its own, which the node starts and cleanup stops.
		"ERL_EPMD_PORT="+strconv.Itoa(epmd),
		"ERL_EPMD_ADDRESS=127.0.0.1",
	)
	s := &Server{Name: "rabbitmq", Addr: loopback(port), Dir: dir, stopSignal: syscall.SIGTERM,
		// Ready once RabbitMQ itself answers: a port that accepts may be
		// another test's listener that took the port while the node booted.
		ready: func(ctx context.Context) error { return speaksAMQP(ctx, loopback(port)) },
		command: func() *exec.Cmd {
			cmd := exec.Command(program)
			cmd.Env, cmd.Dir = env, dir
			return cmd
		}}
	s.ctl = func(args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(filepath.Dir(program), "rabbitmqctl"), append([]string{"--node", node}, args...)...)
		cmd.Env, cmd.Dir = env, dir
		return cmd
	}
	s.cleanup = append(s.cleanup, func() {
		// The node started its port mapper as a daemon, outside its
		// process group: stop it by its port.
		kill := exec.Command("epmd", "-kill")
		kill.Env = env
		kill.Run()
	})
	if err := s.Start(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
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

// startNATS runs nats-server with a user and password.
func startNATS(program string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := serverDir("nats", nil)
	if err != nil {
		return nil, err
	}
	s := &Server{Name: "nats", Addr: loopback(port), Dir: dir, stopSignal: syscall.SIGTERM,
		// Ready once nats-server itself greets with INFO, not when any
		// listener on the port accepts.
		ready: func(ctx context.Context) error { return greetsWithINFO(ctx, loopback(port)) },
		command: func() *exec.Cmd {
			return exec.Command(program, "-a", "127.0.0.1", "-p", strconv.Itoa(port),
				"--user", "vitals", "--pass", NATSPassword)
		}}
	if err := s.Start(); err != nil {
		s.Close()
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

package deps_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/probe"
)

// pgPassword is the test server's password for its superuser, vitals.
const pgPassword = "pg-Pw-4711"

var postgresFixture = fixture{
	kind:     "postgres",
	program:  func(t *testing.T) string { return need(t, "/usr/lib/postgresql/*/bin/postgres", "postgres") },
	start:    startPostgres,
	url:      pgURL,
	password: pgPassword,
	build:    func(url string) (*probe.Prober, error) { return deps.Postgres(deps.PostgresSpec{URL: url}) },
	passes:   regexp.MustCompile(`^SELECT 1 in [0-9.]+(µs|ms)$`),
}

func pgURL(addr, password string) string {
	return "postgres://vitals:" + password + "@" + addr + "/postgres"
}

// startPostgres makes a cluster with initdb, whose superuser vitals logs in
// with a password (SCRAM), and runs postgres on it. PostgreSQL refuses to
// run as root: as root, both run as the user postgres, which the package
// postgresql creates.
func startPostgres(program string) (*server, error) {
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
	if err := os.WriteFile(pwfile, []byte(pgPassword+"\n"), 0o644); err != nil {
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
	s := &server{name: "postgres", addr: loopback(port), dir: dir, stopSignal: syscall.SIGINT, // a fast shutdown
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
		c, err := pgconn.Connect(ctx, pgURL(s.addr, pgPassword)+"?sslmode=disable")
		if err != nil {
			return err
		}
		return c.Close(ctx)
	}
	if err := s.start(); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

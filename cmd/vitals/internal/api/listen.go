package api

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/apisocket"
)

// Listen opens where the API is served: addr is a unix socket's path, or
// tcp://HOST:PORT (which New guards with a token).
//
// A socket's directory is made as apisocket.MakeDir makes it (0755, or 0700
// for the user's own in the temp directory) when missing; when it cannot be
// made or written, or takes no socket, the error is an *apisocket.DirError. A socket file already
// there is replaced when nothing answers on it (a vitals that died), and is an
// error when something does; a file that is not a socket is never replaced.
// The socket is 0600 from the moment it can be reached, and closing the
// listener removes it.
func Listen(addr string) (net.Listener, error) {
	network, address, err := parseAddr(addr)
	if err != nil {
		return nil, err
	}
	if network == "tcp" {
		return net.Listen("tcp", address)
	}
	return listenUnix(address)
}

// parseAddr splits an API address into a network and an address for it.
func parseAddr(addr string) (network, address string, err error) {
	if hostport, ok := strings.CutPrefix(addr, "tcp://"); ok {
		if _, _, err := net.SplitHostPort(hostport); err != nil {
			return "", "", fmt.Errorf("API address %q: want tcp://HOST:PORT: %v", addr, err)
		}
		return "tcp", hostport, nil
	}
	if addr == "" || strings.Contains(addr, "://") {
		return "", "", fmt.Errorf("API address %q: want a unix socket's path or tcp://HOST:PORT", addr)
	}
	return "unix", addr, nil
}

// staleDial bounds the dial that tells a live socket from a stale one: a live
// vitals accepts at once.
const staleDial = time.Second

func listenUnix(path string) (net.Listener, error) {
	if err := apisocket.MakeDir(path); err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket: remove it, or give the API another path", path)
		}
		c, err := net.DialTimeout("unix", path, staleDial)
		switch {
		case err == nil:
			c.Close()
			return nil, fmt.Errorf("something answers on %s already: is another vitals running?", path)
		case !errors.Is(err, syscall.ECONNREFUSED):
			// Not known to be dead (another user's socket, say): never replaced.
			return nil, fmt.Errorf("%s is a socket this process cannot check (%v): remove it, or give the API another path", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	// Bind in a directory only this process can enter, make the socket 0600,
	// then move it into place (replacing a stale one): it is never reachable
	// with the mode the umask gives.
	private, err := os.MkdirTemp(dir, ".vitals-")
	if err != nil {
		return nil, apisocket.OfDir(dir, err)
	}
	defer os.RemoveAll(private)
	bound := filepath.Join(private, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: bound, Net: "unix"})
	if err != nil {
		return nil, apisocket.OfDir(dir, err)
	}
	ln.SetUnlinkOnClose(false) // it is unlinked under its final name
	if err := os.Chmod(bound, 0o600); err != nil {
		ln.Close()
		return nil, apisocket.OfDir(dir, err)
	}
	if err := os.Rename(bound, path); err != nil {
		ln.Close()
		return nil, apisocket.OfDir(dir, err)
	}
	return &socketListener{UnixListener: ln, path: path}, nil
}

// socketListener removes its socket file when closed.
type socketListener struct {
	*net.UnixListener
	path string
}

func (l *socketListener) Close() error {
	err := l.UnixListener.Close()
	if rmErr := os.Remove(l.path); err == nil && !errors.Is(rmErr, fs.ErrNotExist) {
		err = rmErr
	}
	return err
}

// ReadToken reads a bearer token from a file: its content without the
// surrounding white space (an editor's newline). An empty token is an error:
// it would let anyone in.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	return token, nil
}

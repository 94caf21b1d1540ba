// Package apisocket is what the configuration and the management API agree
// on about the API's unix socket: where it is by default, and how long its
// path may be. A leaf, so that config need not import the API's server.
package apisocket

import (
	"fmt"
	"path/filepath"
	"syscall"
)

// Default is where the agent serves its management API unless told
// otherwise: a unix socket, reachable by root only (0600).
const Default = "/run/vitals/vitals.sock"

// maxSocketPath is the longest path a unix socket can have: sun_path holds
// 108 bytes on Linux, the NUL that ends the path included.
const maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// maxSocketDir is the longest directory api.Listen can bind a socket in: it
// binds first at DIR/.vitals-NNNNNNNNNN/s (os.MkdirTemp's digits), 21 bytes
// more, and then moves the socket into place.
const maxSocketDir = maxSocketPath - len("/.vitals-4294967295/s")

// Check says whether api.Listen can serve the API at path, a unix
// socket's, as far as its length goes: a path too long for sun_path is one
// that clients cannot reach, and a directory too long one where the bind
// fails.
func Check(path string) error {
	if len(path) > maxSocketPath {
		return fmt.Errorf("%q is %d bytes, too long for a unix socket: at most %d", path, len(path), maxSocketPath)
	}
	if dir := filepath.Dir(path); len(dir) > maxSocketDir {
		return fmt.Errorf("%q is in a directory of %d bytes, too long for the socket to be made there: at most %d", path, len(dir), maxSocketDir)
	}
	return nil
}

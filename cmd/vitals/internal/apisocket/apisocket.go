// Package apisocket is what the configuration, the management API and the
// commands that talk to it agree on about the API's unix socket: where it is
// by default, how its directory is made, and how long its path may be. A
// leaf, so that config need not import the API's server.
package apisocket

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// RootDefault is root's default socket: the place the management commands
// have always looked, kept while root can make it.
const RootDefault = "/run/vitals/vitals.sock"

// name is the socket's name in the default directories.
const name = "vitals.sock"

// Default is where the agent serves its management API unless vitals.yaml's
// api: says otherwise, and where the commands that talk to it look unless
// --api or $VITALS_API does: a unix socket, reachable by its user only
// (0600). The same user in the same environment gets the same path, so
// that vitals run and vitals checks meet without configuration:
//
//   - root: RootDefault, when /run/vitals can be made or written (not on a
//     read-only root file system);
//   - then $XDG_RUNTIME_DIR/vitals/vitals.sock, when XDG_RUNTIME_DIR is an
//     absolute path to a directory of the user's own, that only the user
//     can enter, and that can be written (as the XDG spec has it; pam_systemd
//     makes /run/user/UID so);
//   - else TMP/vitals-UID/vitals.sock, TMP being os.TempDir() ($TMPDIR, else
//     /tmp): a directory MakeDir makes 0700, and refuses when it is another
//     user's or others can enter it.
//
// Nothing is made here: the commands call it too.
func Default() string {
	return choose(os.Geteuid(), RootDefault, os.Getenv("XDG_RUNTIME_DIR"), os.TempDir())
}

// choose is Default for the user uid, given root's socket, XDG_RUNTIME_DIR
// and the temp directory.
func choose(uid int, root, xdg, tmp string) string {
	if uid == 0 && canMake(filepath.Dir(root)) {
		return root
	}
	if xdg != "" && filepath.IsAbs(xdg) && private(xdg, uid) == nil && writable(xdg) == nil {
		return filepath.Join(xdg, "vitals", name)
	}
	return filepath.Join(privateDir(tmp, uid), name)
}

// privateDir is the user's directory in the temp directory tmp.
func privateDir(tmp string, uid int) string {
	return filepath.Join(tmp, "vitals-"+strconv.Itoa(uid))
}

// canMake says whether dir is, or can be made, a directory this process
// writes: the nearest of it and its parents that exists is a directory it
// can write.
func canMake(dir string) bool {
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			return fi.IsDir() && writable(dir) == nil
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, fs.ErrNotExist) || parent == dir {
			return false
		}
		dir = parent
	}
}

// access(2)'s modes, which package syscall does not name.
const (
	wOK = 0o2
	xOK = 0o1
)

// writable says why this process cannot make files in dir, if it cannot: a
// read-only file system or a directory of someone else's.
func writable(dir string) error {
	// access(2) answers for the real user, which vitals's is but for a
	// setuid binary, which vitals never is.
	if err := syscall.Access(dir, wOK|xOK); err != nil {
		return &fs.PathError{Op: "write in", Path: dir, Err: err}
	}
	return nil
}

// private says why dir is not a directory only uid can enter, if it is not:
// not a directory (a symbolic link is not followed), another user's, or
// open to its group or to others.
func private(dir string, uid int) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory (%v)", dir, fi.Mode().Type())
	case !ok:
		return fmt.Errorf("%s: no owner known", dir)
	case int(st.Uid) != uid:
		return fmt.Errorf("%s belongs to uid %d, not to uid %d", dir, st.Uid, uid)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%s is mode %#o: others than its owner can enter it", dir, fi.Mode().Perm())
	}
	return nil
}

// A DirError says that a socket's directory cannot be made or written: a
// fault of where the socket is put, which another path mends.
type DirError struct {
	Dir string
	Err error
}

func (e *DirError) Error() string {
	return fmt.Sprintf("the socket's directory %s: %v", e.Dir, e.Err)
}

func (e *DirError) Unwrap() error { return e.Err }

// dirErrnos are the failures of making a socket in a directory that are the
// directory's: no permission, a read-only or full file system, a directory
// gone or no directory, one that takes no files (/proc, /sys). Another
// (too many open files, say) is vitals's own.
var dirErrnos = []syscall.Errno{syscall.EACCES, syscall.EPERM, syscall.EROFS, syscall.ENOSPC, syscall.EDQUOT, syscall.ENOENT, syscall.ENOTDIR}

// OfDir is err, an error of making a socket in dir, as a *DirError when it
// is the directory's fault (MakeDir could not tell it ahead: root may write
// in /proc, which takes no socket); else err as it is.
func OfDir(dir string, err error) error {
	for _, errno := range dirErrnos {
		if errors.Is(err, errno) {
			return &DirError{Dir: dir, Err: err}
		}
	}
	return err
}

// MakeDir makes the directory of the socket path, when missing, and says
// whether a socket can be made there; its error is a *DirError. The user's
// directory in the temp directory (see Default) is made 0700 and must stay
// the user's own and closed to others, whoever made it: in /tmp another
// user could make it first and reach, or replace, the socket. Any other
// directory is made 0755, its missing parents with it.
func MakeDir(path string) error {
	dir := filepath.Dir(path)
	if err := makeDir(dir, os.Geteuid(), os.TempDir()); err != nil {
		return &DirError{Dir: dir, Err: err}
	}
	return nil
}

func makeDir(dir string, uid int, tmp string) error {
	if dir == privateDir(tmp, uid) {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := private(dir, uid); err != nil {
			return fmt.Errorf("%w: remove it, or give the API another path", err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writable(dir)
}

// maxSocketPath is the longest path a unix socket can have: sun_path holds
// 108 bytes on Linux, the NUL that ends the path included.
const maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// maxSocketDir is the longest directory api.Listen can bind a socket in: it
// binds first at DIR/.vitals-NNNNNNNNNN/s (os.MkdirTemp's digits), 21 bytes
// more, and then moves the socket into place.
const maxSocketDir = maxSocketPath - len("/.vitals-4294967295/s")

// Reachable says whether a client can connect to a unix socket at path, as
// far as its length goes: sun_path holds no longer a path.
func Reachable(path string) error {
	if len(path) > maxSocketPath {
		return fmt.Errorf("%q is %d bytes, too long for a unix socket: at most %d", path, len(path), maxSocketPath)
	}
	return nil
}

// Check says whether api.Listen can serve the API at path, a unix
// socket's, as far as its length goes: a path too long for sun_path is one
// that clients cannot reach, and a directory too long one where the bind
// fails.
func Check(path string) error {
	if err := Reachable(path); err != nil {
		return err
	}
	if dir := filepath.Dir(path); len(dir) > maxSocketDir {
		return fmt.Errorf("%q is in a directory of %d bytes, too long for the socket to be made there: at most %d", path, len(dir), maxSocketDir)
	}
	return nil
}

package api_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/api"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/apisocket"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
)

func TestTheSocketIs0600InADirectoryItMakesAndGoesAwayOnClose(t *testing.T) {
	path := filepath.Join(filepath.Dir(vitalstest.SocketPath(t)), "run", "vitals.sock")
	ln, err := api.Listen(path)
	must(t, err)
	fi, err := os.Stat(path)
	must(t, err)
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, want a socket with 0600", fi.Mode())
	}
	di, err := os.Stat(filepath.Dir(path))
	must(t, err)
	if di.Mode().Perm() != 0o755 {
		t.Fatalf("directory mode %v, want 0755", di.Mode())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("the directory holds %v: the private directory the socket was bound in is left", entries)
	}
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("unix", path)
	must(t, err)
	c.Close()
	must(t, ln.Close())
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("the socket is still there after Close: %v", err)
	}
}

func TestAStaleSocketIsReplacedAndALiveOneIsNot(t *testing.T) {
	path := vitalstest.SocketPath(t)
	// A vitals that died leaves its socket file, and nothing answers on it.
	dead, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	must(t, err)
	dead.SetUnlinkOnClose(false)
	dead.Close()
	ln, err := api.Listen(path)
	if err != nil {
		t.Fatalf("a stale socket: %v", err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, err = api.Listen(path)
	if err == nil || err.Error() != "something answers on "+path+" already: is another vitals running?" {
		t.Fatalf("a live socket: %v", err)
	}
	if _, err := net.Dial("unix", path); err != nil {
		t.Fatalf("the live socket was taken away: %v", err)
	}
}

func TestAFileThatIsNoSocketIsLeftAlone(t *testing.T) {
	path := vitalstest.SocketPath(t)
	must(t, os.WriteFile(path, []byte("notes"), 0o644))
	_, err := api.Listen(path)
	if err == nil || !strings.Contains(err.Error(), "exists and is not a socket") {
		t.Fatalf("%v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "notes" {
		t.Fatalf("the file now holds %q", b)
	}
}

// A directory that is there and, for root, writable, but takes no socket
// (/proc takes no files) is a *apisocket.DirError, as a directory that
// cannot be made is: a fault of the path given, which another one mends.
func TestASocketThatCannotBeMadeInItsDirectoryIsADirError(t *testing.T) {
	_, err := api.Listen("/proc/vitals.sock")
	var dirErr *apisocket.DirError
	if !errors.As(err, &dirErr) || dirErr.Dir != "/proc" {
		t.Fatalf("%v (%T), want a *apisocket.DirError of /proc", err, err)
	}
}

func TestAddressesAreASocketPathOrTCP(t *testing.T) {
	for _, bad := range []string{"", "http://localhost:8559", "tcp://localhost"} {
		if _, err := api.Listen(bad); err == nil {
			t.Errorf("Listen(%q) works", bad)
		}
	}
	ln, err := api.Listen("tcp://127.0.0.1:0")
	must(t, err)
	ln.Close()
}

func TestATokenFileIsReadTrimmedAndMustNotBeEmpty(t *testing.T) {
	dir := t.TempDir()
	good, empty := filepath.Join(dir, "token"), filepath.Join(dir, "empty")
	must(t, os.WriteFile(good, []byte("  s3cret\n"), 0o600))
	must(t, os.WriteFile(empty, []byte("\n"), 0o600))
	if tok, err := api.ReadToken(good); err != nil || tok != "s3cret" {
		t.Fatalf("%q, %v", tok, err)
	}
	if _, err := api.ReadToken(empty); err == nil || err.Error() != "token file "+empty+" is empty" {
		t.Fatalf("%v", err)
	}
	if _, err := api.ReadToken(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing file reads")
	}
}

// The longest socket path that apisocket.Check accepts, in the longest
// directory, is one that Listen serves and a client reaches; a byte more of
// either is refused.
func TestTheLongestSocketPathCheckAcceptsListens(t *testing.T) {
	// sun_path's 108 bytes, less the NUL; less "/.vitals-4294967295/s".
	const maxSocketPath, maxSocketDir = 107, 86
	base := t.TempDir()
	dir := filepath.Join(base, strings.Repeat("d", maxSocketDir-len(base)-1))
	path := filepath.Join(dir, strings.Repeat("s", maxSocketPath-len(dir)-1))
	if len(dir) != maxSocketDir || len(path) != maxSocketPath {
		t.Fatalf("dir of %d bytes, path of %d", len(dir), len(path))
	}
	if err := apisocket.Check(path); err != nil {
		t.Fatal(err)
	}
	ln, err := api.Listen(path)
	if err != nil {
		t.Fatalf("Listen(%s): %v", path, err)
	}
	defer ln.Close()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	c.Close()
	if err := apisocket.Check(path + "s"); err == nil {
		t.Errorf("a path of %d bytes accepted", len(path)+1)
	}
	if err := apisocket.Check(filepath.Join(dir+"d", "s")); err == nil {
		t.Errorf("a directory of %d bytes accepted", len(dir)+1)
	}
}

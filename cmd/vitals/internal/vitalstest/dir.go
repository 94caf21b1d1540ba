package vitalstest

import (
	"os"
	"path/filepath"
	"testing"
)

// ShortDir is a new directory, removed when the test ends, with a path
// short enough for a unix socket's 108 bytes whatever the test's name
// (t.TempDir's paths hold it, and are often too long).
func ShortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// SocketPath is a path for the management API's socket in a new ShortDir.
func SocketPath(t testing.TB) string {
	t.Helper()
	return filepath.Join(ShortDir(t), "vitals.sock")
}

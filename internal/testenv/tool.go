package testenv

import (
	"fmt"
	"os"
	"path/filepath"
)

// Tool is the program name at version that the tests run (a client or a
// server users run: grpc-health-probe, Pebble), in the user's cache
// directory as vitals-tools/NAME-VERSION: build makes it at the path it is
// given, once for each version, and later runs find it there. It is built
// beside its place and renamed into it, so that a run stopped halfway, or
// another running at once, never sees half a program.
func Tool(name, version string, build func(path string) error) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dest := filepath.Join(cache, "vitals-tools", name+"-"+version)
	if _, err := os.Stat(dest); err == nil {
		return dest, nil
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return "", err
	}
	partial := fmt.Sprintf("%s.%d.partial", dest, os.Getpid())
	defer os.Remove(partial)
	if err := build(partial); err != nil {
		return "", err
	}
	return dest, os.Rename(partial, dest)
}

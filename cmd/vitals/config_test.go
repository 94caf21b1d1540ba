package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A file that validates is a file that starts: what would fail only when
// vitals run binds its servers is a FILE:LINE:COL error at validate, and at
// run, exit 2, with nothing started.
func TestAddressesThatWouldNotStartAreConfigErrors(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	socket := filepath.Join(t.TempDir(), "vitals.sock")
	long := filepath.Join(t.TempDir(), strings.Repeat("s", 110)+".sock")
	for _, tc := range []struct {
		top  string // the file's first lines
		want string // after FILE:
	}{
		{"listen: 127.0.0.1:99999\napi: " + socket,
			`1:9: listen: "127.0.0.1:99999": port "99999" is not a number from 0 to 65535 (0: any free port) or a service name`},
		{"listen: \":-1\"\napi: " + socket,
			`1:9: listen: ":-1": port "-1" is not a number from 0 to 65535 (0: any free port) or a service name`},
		{"listen: " + addr + "\ngrpc-listen: 127.0.0.1:99999\napi: " + socket,
			`2:14: grpc-listen: "127.0.0.1:99999": port "99999" is not a number`},
		{"listen: " + addr + "\napi: tcp://127.0.0.1:99999\napi-token-file: " + token,
			`2:6: api: "tcp://127.0.0.1:99999": port "99999" is not a number`},
		{"listen: " + addr + "\napi: tcp://" + addr + "\napi-token-file: " + token,
			`2:6: api: "tcp://` + addr + `" shares a port with listen ("` + addr + `"): give each its own port`},
		{"listen: " + addr + "\ngrpc-listen: 0.0.0.0:" + port + "\napi: " + socket,
			`2:14: grpc-listen: "0.0.0.0:` + port + `" shares a port with listen ("` + addr + `"): give each its own port`},
		{"listen: " + addr + "\napi: " + long,
			`2:6: api: "` + long + `" is ` + fmt.Sprint(len(long)) + ` bytes, too long for a unix socket: at most 107`},
	} {
		path := writeConfig(t, tc.top+"\nchecks:\n  up: {tcp: {address: \""+addr+"\"}}\n")
		vitalsRun(t, "validate", "-c", path).expect(t, 2, "", path+":"+tc.want)
		vitalsRun(t, "run", "-c", path).expect(t, 2, "", path+":"+tc.want)
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			t.Fatalf("%s: something listens on the probe address after a bad file", tc.top)
		}
	}
}

// What vitals reads of a file is bounded: a device or a FIFO that never
// ends, a file of brackets nested 100,000 deep, are errors at once, and the
// file can come from stdin.
func TestReadingAFileIsBounded(t *testing.T) {
	const tooLarge = ": larger than 4 MiB: is it the configuration? (it is read no further)"
	vitalsRun(t, "validate", "-c", "/dev/zero").expect(t, 2, "", fmt.Sprintf("/dev/zero:1:%d%s", 4<<20+1, tooLarge))

	fifo := filepath.Join(t.TempDir(), "vitals.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() { // a writer that never stops: it ends when vitals closes its end
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		for line := []byte("# more\n"); ; {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	}()
	// Lines of 7 bytes: the bound falls on the line after the whole ones.
	vitalsRun(t, "run", "-c", fifo).expect(t, 2, "", fmt.Sprintf("%s:%d:%d%s", fifo, (4<<20)/7+1, (4<<20)%7+1, tooLarge))

	bomb := writeConfig(t, "checks: "+strings.Repeat("[", 100000)+"\n")
	cmd := exec.Command(vitals, "validate", "-c", bomb)
	out, err := cmd.CombinedOutput()
	want := bomb + ":1:72: YAML: nested deeper than 64 levels: a vitals.yaml needs a handful\n"
	if cmd.ProcessState.ExitCode() != 2 || string(out) != want {
		t.Fatalf("validate of a bomb: %v\n%s\nwant exit 2 and %s", err, out, want)
	}
	// Once the parser took more than 14 GB for it.
	if rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss; rss > 200<<10 {
		t.Errorf("validate of a bomb took %d MiB", rss>>10)
	}

	good := "checks:\n  up: {heartbeat: {ttl: 1s}}\n"
	cmd = exec.Command(vitals, "validate", "-c", "-")
	cmd.Stdin = strings.NewReader(good)
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != "ok: stdin: 1 checks\n" {
		t.Fatalf("validate -c - : %v\n%s", err, out)
	}
}

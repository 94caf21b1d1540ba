package apisocket

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/vitals-dev/vitals/internal/testenv"
)

// someone is a user other than the one running the tests.
const someone = 65534

func mkdir(t *testing.T, dir string, mode os.FileMode) string {
	t.Helper()
	if err := os.Mkdir(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return dir
}

// chown gives path to uid, which only root can.
func chown(t *testing.T, path string, uid int) {
	t.Helper()
	testenv.NeedRoot(t, "giving a directory to another user")
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// cannotMake is a root socket whose directory cannot be made: its parent
// is a file (as /run is read-only where root cannot write).
func cannotMake(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "run")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(file, "vitals", "vitals.sock")
}

func TestRootKeepsRunWhileItCanBeMade(t *testing.T) {
	tmp, xdg := t.TempDir(), mkdir(t, filepath.Join(t.TempDir(), "xdg"), 0o700)
	run := filepath.Join(t.TempDir(), "run", "vitals", "vitals.sock") // run/ is missing: made with vitals/
	if got := choose(0, run, xdg, tmp); got != run {
		t.Errorf("root, where run/vitals can be made: %q, want %q", got, run)
	}
	// Where it cannot, root gets what any user gets.
	if got, want := choose(0, cannotMake(t), "", tmp), filepath.Join(tmp, "vitals-0", "vitals.sock"); got != want {
		t.Errorf("root, where run/vitals cannot be made: %q, want %q", got, want)
	}
	if os.Geteuid() == 0 { // xdg is root's own
		if got, want := choose(0, cannotMake(t), xdg, tmp), filepath.Join(xdg, "vitals", "vitals.sock"); got != want {
			t.Errorf("root, where run/vitals cannot be made, with XDG_RUNTIME_DIR: %q, want %q", got, want)
		}
	}
	// Another user never gets root's socket, whether or not it can make it.
	if got := choose(someone, run, "", tmp); got != filepath.Join(tmp, "vitals-65534", "vitals.sock") {
		t.Errorf("uid %d: %q, want its directory in the temp directory", someone, got)
	}
}

func TestAUsersSocketIsInXDGRuntimeDirWhenItIsTheirsAlone(t *testing.T) {
	uid, root, tmp := os.Geteuid(), cannotMake(t), t.TempDir()
	inTmp := filepath.Join(tmp, "vitals-"+strconv.Itoa(uid), "vitals.sock")
	xdg := mkdir(t, filepath.Join(t.TempDir(), "xdg"), 0o700)
	if got, want := choose(uid, root, xdg, tmp), filepath.Join(xdg, "vitals", "vitals.sock"); got != want {
		t.Errorf("XDG_RUNTIME_DIR %s, the user's, 0700: %q, want %q", xdg, got, want)
	}
	for what, xdg := range map[string]string{
		"unset":                    "",
		"relative":                 "xdg",
		"missing":                  filepath.Join(t.TempDir(), "missing"),
		"a file":                   filepath.Join(t.TempDir(), "file"),
		"open to others (0755)":    mkdir(t, filepath.Join(t.TempDir(), "xdg"), 0o755),
		"open to its group (0770)": mkdir(t, filepath.Join(t.TempDir(), "xdg"), 0o770),
	} {
		if what == "a file" {
			if err := os.WriteFile(xdg, nil, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		if got := choose(uid, root, xdg, tmp); got != inTmp {
			t.Errorf("XDG_RUNTIME_DIR %s (%q): %q, want %q", what, xdg, got, inTmp)
		}
	}
}

func TestXDGRuntimeDirOfAnotherUserIsPassedOver(t *testing.T) {
	xdg := mkdir(t, filepath.Join(t.TempDir(), "xdg"), 0o700)
	chown(t, xdg, someone)
	tmp := t.TempDir()
	// As root's own, say, left in the environment of a command run as uid 0
	// with /run read-only.
	if got, want := choose(0, cannotMake(t), xdg, tmp), filepath.Join(tmp, "vitals-0", "vitals.sock"); got != want {
		t.Errorf("XDG_RUNTIME_DIR of uid %d, for uid 0: %q, want %q", someone, got, want)
	}
}

func TestTheUsersTempDirectoryIsMade0700(t *testing.T) {
	uid, tmp := os.Geteuid(), t.TempDir()
	dir := privateDir(tmp, uid)
	if err := makeDir(dir, uid, tmp); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("%s: mode %v, want a directory 0700", dir, fi.Mode())
	}
	// Made already, by the user: taken as it is.
	if err := makeDir(dir, uid, tmp); err != nil {
		t.Fatalf("made a second time: %v", err)
	}
}

func TestTheUsersTempDirectoryIsRefusedWhenOthersCouldReachIt(t *testing.T) {
	uid := os.Geteuid()
	for what, makeIt := range map[string]func(t *testing.T, dir string){
		"open to others (0755)":    func(t *testing.T, dir string) { mkdir(t, dir, 0o755) },
		"open to its group (0750)": func(t *testing.T, dir string) { mkdir(t, dir, 0o750) },
		"a symbolic link to the user's directory": func(t *testing.T, dir string) {
			if err := os.Symlink(mkdir(t, filepath.Join(t.TempDir(), "real"), 0o700), dir); err != nil {
				t.Fatal(err)
			}
		},
		"a file": func(t *testing.T, dir string) {
			if err := os.WriteFile(dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		},
	} {
		tmp := t.TempDir()
		dir := privateDir(tmp, uid)
		makeIt(t, dir)
		if err := makeDir(dir, uid, tmp); err == nil {
			t.Errorf("%s: taken, want refused", what)
		}
	}
}

func TestTheUsersTempDirectoryIsRefusedWhenAnotherUserMadeIt(t *testing.T) {
	tmp := t.TempDir()
	dir := mkdir(t, privateDir(tmp, os.Geteuid()), 0o700)
	chown(t, dir, someone)
	err := makeDir(dir, os.Geteuid(), tmp)
	if err == nil {
		t.Fatalf("%s, of uid %d: taken, want refused", dir, someone)
	}
	t.Log(err)
}

func TestOtherDirectoriesAreMade0755AndADirectoryThatCannotBeIsADirError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "vitals.sock")
	if err := MakeDir(path); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))} {
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: %v, %v; want a directory 0755", dir, fi, err)
		}
	}
	var dirErr *DirError
	if err := MakeDir(cannotMake(t)); !errors.As(err, &dirErr) {
		t.Errorf("under a file: %v, want a *DirError", err)
	}
}

package notify

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/procnet"
)

// maxDepth bounds the walk from a sender up its parents: a process tree is
// a few levels deep, and a walk that goes on is one that raced with pids
// being reused.
const maxDepth = 256

// member says whether the process pid belongs to the workload whose main
// process is main: it is main, one of main's descendants, or in main's
// process group (the supervisor makes one, numbered main, for each run:
// a process of the workload that its parent left behind is still in it).
// It reads proc's stat files (proc is /proc but in tests); a process that
// is gone, or was reaped, cannot be told, and is an error.
func member(proc string, pid, main int) (bool, error) {
	for range maxDepth {
		if pid == main {
			return true, nil
		}
		if pid <= 1 {
			return false, nil
		}
		b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
		if err != nil {
			return false, err
		}
		st, err := procnet.ParseStat(b)
		if err != nil {
			return false, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		if st.PGRP == main {
			return true, nil
		}
		pid = st.PPID
	}
	return false, nil
}

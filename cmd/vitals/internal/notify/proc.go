package notify

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
		ppid, pgrp, err := parseStat(b)
		if err != nil {
			return false, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		if pgrp == main {
			return true, nil
		}
		pid = ppid
	}
	return false, nil
}

// parseStat reads a process's parent and process group from its
// /proc/PID/stat: "PID (COMM) STATE PPID PGRP ...", where COMM, the
// command's name, may hold spaces and parentheses of its own, so the
// fields are counted from the last ")".
func parseStat(b []byte) (ppid, pgrp int, err error) {
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return 0, 0, fmt.Errorf("no command name in %q", b)
	}
	fields := bytes.Fields(b[end+1:])
	if len(fields) < 3 {
		return 0, 0, fmt.Errorf("no parent and process group in %q", b)
	}
	if ppid, err = strconv.Atoi(string(fields[1])); err != nil {
		return 0, 0, fmt.Errorf("parent: %w", err)
	}
	if pgrp, err = strconv.Atoi(string(fields[2])); err != nil {
		return 0, 0, fmt.Errorf("process group: %w", err)
	}
	return ppid, pgrp, nil
}

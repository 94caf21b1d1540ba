package procnet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Processes names the processes whose sockets a check counts: at most one
// of its fields. None (the zero Processes) names the workload's, whose pid
// the check is given.
type Processes struct {
	// PID is a process's pid, as vitals probe --pid gives it.
	PID int
	// PIDFile is a file that holds a process's pid, as a daemon writes it;
	// read at each run.
	PIDFile string
	// Name is every process of that name (Named): in Kubernetes, the
	// workload of another container of the pod, which vitals sees with
	// shareProcessNamespace: true.
	Name string
	// AnyProcess counts every socket of vitals's network namespace,
	// whoever holds it but vitals, as ss shows them: in Kubernetes, those
	// of every container of the pod, which share it, with no access to
	// their processes needed.
	AnyProcess bool
}

// None says that p names no processes: the check counts the workload's.
func (p Processes) None() bool { return p == Processes{} }

// validate says what is wrong with p, each problem a *FieldError.
func (p Processes) validate() []error {
	var errs []error
	var named []string
	for _, f := range []struct {
		field string
		given bool
	}{{"pid", p.PID != 0}, {"pid-file", p.PIDFile != ""}, {"process", p.Name != ""}, {"any-process", p.AnyProcess}} {
		if !f.given {
			continue
		}
		if len(named) > 0 {
			errs = append(errs, &FieldError{f.field, fmt.Errorf("%s names the processes already: give one of the two", named[0])})
		}
		named = append(named, f.field)
	}
	if p.PID < 0 {
		errs = append(errs, &FieldError{"pid", fmt.Errorf("%d is not a pid", p.PID)})
	}
	if strings.Contains(p.Name, "/") {
		errs = append(errs, &FieldError{"process", fmt.Errorf("%q is a path: give the process's name, as ps shows it (its file's base name)", p.Name)})
	}
	return errs
}

// FieldError is what is wrong with one field of a spec. Field is the
// field's name as vitals.yaml writes it, such as "remote".
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + " " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// procDir is where the kernel shows the processes.
const procDir = "/proc"

// looked is what a run found of the processes' sockets.
type looked struct {
	// sockets are the TCP sockets the processes hold: with AnyProcess,
	// every one of vitals's network namespace that a process holds.
	sockets []Socket
	// holder is the process that holds each socket, by inode (the lowest
	// pid of those that share it); nil with AnyProcess.
	holder map[uint64]Stat
	// roots are the processes named; under is how many more were looked
	// at, their descendants and the members of the groups they lead.
	roots []Stat
	under int
	// unreadable are the processes whose sockets could not be read (they
	// are another user's, and vitals lacks CAP_SYS_PTRACE), each error
	// naming its pid.
	unreadable []error
}

// look finds the sockets that the processes p names hold; workload gives
// the workload's pid when p names none.
func look(ctx context.Context, p Processes, workload func() int) (looked, error) {
	if p.AnyProcess {
		s, err := sockets(procDir + "/self")
		if err != nil {
			return looked{}, err
		}
		// vitals's own sockets are not the workload's: an amqp check's
		// connection to the broker would pass a connection check of it.
		mine, err := socketInodes(os.Getpid())
		if err != nil {
			return looked{}, err
		}
		return looked{sockets: slices.DeleteFunc(s, func(s Socket) bool { return s.Inode == 0 || slices.Contains(mine, s.Inode) })}, nil
	}
	procs, err := processes()
	if err != nil {
		return looked{}, err
	}
	roots, err := named(p, workload, procs)
	if err != nil {
		return looked{}, err
	}
	byPID := make(map[int]Stat, len(procs))
	for _, s := range procs {
		byPID[s.PID] = s
	}
	var members []int
	for _, r := range roots {
		members = append(members, Tree(r.PID, procs)...)
	}
	slices.Sort(members)
	members = slices.Compact(members)
	l := looked{holder: map[uint64]Stat{}, roots: roots, under: len(members) - len(roots)}
	read := map[string]bool{} // the network namespaces read
	var all []Socket
	for _, pid := range members {
		if err := ctx.Err(); err != nil {
			return looked{}, err
		}
		inodes, err := socketInodes(pid)
		switch {
		case ended(err):
			continue
		case err != nil:
			l.unreadable = append(l.unreadable, fmt.Errorf("pid %d: %w", pid, err))
			continue
		case len(inodes) == 0:
			continue
		}
		for _, inode := range inodes {
			if _, ok := l.holder[inode]; !ok {
				l.holder[inode] = byPID[pid]
			}
		}
		ns, err := os.Readlink(fmt.Sprintf("%s/%d/ns/net", procDir, pid))
		if err != nil {
			ns = "of pid " + strconv.Itoa(pid)
		}
		if read[ns] {
			continue
		}
		s, err := sockets(fmt.Sprintf("%s/%d", procDir, pid))
		switch {
		case ended(err):
			continue
		case err != nil:
			l.unreadable = append(l.unreadable, fmt.Errorf("pid %d: %w", pid, err))
			continue
		}
		read[ns] = true
		all = append(all, s...)
	}
	for _, s := range all {
		if _, held := l.holder[s.Inode]; held && s.Inode != 0 {
			l.sockets = append(l.sockets, s)
		}
	}
	return l, nil
}

// named are the running processes that p names, the workload's when it
// names none.
func named(p Processes, workload func() int, procs []Stat) ([]Stat, error) {
	find := func(pid int) (Stat, bool) {
		i := slices.IndexFunc(procs, func(s Stat) bool { return s.PID == pid })
		if i < 0 {
			return Stat{}, false
		}
		return procs[i], true
	}
	switch {
	case p.Name != "":
		var out []Stat
		for _, s := range procs {
			if Named(p.Name, s.Comm, argv(s.PID)) {
				out = append(out, s)
			}
		}
		if out == nil {
			return nil, fmt.Errorf("no process is named %q", p.Name)
		}
		return out, nil
	case p.PIDFile != "":
		pid, err := readPIDFile(p.PIDFile)
		if err != nil {
			return nil, err
		}
		s, ok := find(pid)
		if !ok {
			return nil, fmt.Errorf("pid %d of %s is not running", pid, p.PIDFile)
		}
		return []Stat{s}, nil
	case p.PID != 0:
		s, ok := find(p.PID)
		if !ok {
			return nil, fmt.Errorf("pid %d is not running", p.PID)
		}
		return []Stat{s}, nil
	}
	s, ok := find(workload())
	if !ok {
		return nil, errors.New("the workload is not running")
	}
	return []Stat{s}, nil
}

// readPIDFile reads the pid that file holds.
func readPIDFile(file string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("pid-file: %w", err)
	}
	text := strings.TrimSpace(string(b))
	pid, err := strconv.Atoi(text)
	if err != nil || pid <= 0 {
		if len(text) > 32 {
			text = text[:32] + "…"
		}
		return 0, fmt.Errorf("pid-file %s holds %q, not a pid", file, text)
	}
	return pid, nil
}

// processes reads every process's stat. One that ends meanwhile is left
// out.
func processes() ([]Stat, error) {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return nil, fmt.Errorf("list the processes: %w", err)
	}
	var out []Stat
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(procDir + "/" + e.Name() + "/stat")
		if err != nil {
			continue // it ended
		}
		s, err := ParseStat(b)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// argv is a process's arguments; nil for one that has ended, or has none
// (a kernel thread, a zombie).
func argv(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("%s/%d/cmdline", procDir, pid))
	if err != nil {
		return nil
	}
	return ParseCmdline(b)
}

// socketInodes are the inodes of the sockets pid has open.
func socketInodes(pid int) ([]uint64, error) {
	dir := fmt.Sprintf("%s/%d/fd", procDir, pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, e := range entries {
		link, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue // closed meanwhile
		}
		if inode, ok := SocketInode(link); ok {
			out = append(out, inode)
		}
	}
	return out, nil
}

// sockets are the TCP sockets, IPv4 and IPv6, of the network namespace of
// the process whose /proc directory is dir.
func sockets(dir string) ([]Socket, error) {
	var out []Socket
	for _, file := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(dir + "/net/" + file)
		if file == "tcp6" && errors.Is(err, fs.ErrNotExist) {
			continue // a kernel without IPv6
		}
		if err != nil {
			return nil, err
		}
		s, err := ParseTCP(b)
		if err != nil {
			return nil, fmt.Errorf("%s/net/%s: %w", dir, file, err)
		}
		out = append(out, s...)
	}
	return out, nil
}

// ended says whether err is that of reading a process that has ended.
func ended(err error) bool {
	return errors.Is(err, syscall.ESRCH) || errors.Is(err, fs.ErrNotExist)
}

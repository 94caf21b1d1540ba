// Package procnet reads, from /proc, the TCP sockets that processes hold:
// which processes (one and its descendants, or those of a name), which
// sockets they have open (/proc/PID/fd), and what each socket is
// (/proc/PID/net/tcp and tcp6, the process's network namespace). Its checks
// are the connection and listening kinds: the workload holds a connection
// to its broker, the workload listens on its port.
//
// What /proc writes is read by pure functions (ParseTCP, ParseStat,
// ParseCmdline, SocketInode, Named, Tree), tested on text /proc wrote; the
// rest opens the files. It needs nothing but the standard library and the
// root module, so that the probe build has its kinds too; package kinds
// declares them.
package procnet

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
)

// State is a TCP socket's state as /proc/net/tcp writes it, in its st
// column (the kernel's include/net/tcp_states.h).
type State uint8

// The states the checks count.
const (
	Established State = 0x01
	Listen      State = 0x0A
)

// Socket is one line of /proc/net/tcp or /proc/net/tcp6.
type Socket struct {
	// Local and Remote are its ends; an IPv4-mapped IPv6 address
	// (::ffff:10.0.0.5, an IPv6 socket's connection to an IPv4 address)
	// is its IPv4 address. A listening socket's Remote is the unspecified
	// address, port 0.
	Local, Remote netip.AddrPort
	State         State
	// Inode is the socket's inode, which a process's fd links to
	// (socket:[INODE]); 0 for one no process holds (TIME_WAIT).
	Inode uint64
}

// ParseTCP reads the text of /proc/PID/net/tcp or /proc/PID/net/tcp6: a
// header line, then a socket a line.
func ParseTCP(text []byte) ([]Socket, error) {
	lines := bytes.Split(bytes.TrimRight(text, "\n"), []byte("\n"))
	var out []Socket
	for i, line := range lines[1:] {
		f := strings.Fields(string(line))
		if len(f) == 0 {
			continue
		}
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when
		// retrnsmt uid timeout inode ...
		if len(f) < 10 {
			return nil, fmt.Errorf("line %d: %d fields, want at least 10: %q", i+2, len(f), line)
		}
		local, err := parseAddrPort(f[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: local address: %w", i+2, err)
		}
		remote, err := parseAddrPort(f[2])
		if err != nil {
			return nil, fmt.Errorf("line %d: remote address: %w", i+2, err)
		}
		st, err := strconv.ParseUint(f[3], 16, 8)
		if err != nil {
			return nil, fmt.Errorf("line %d: state %q: %w", i+2, f[3], err)
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: inode %q: %w", i+2, f[9], err)
		}
		out = append(out, Socket{Local: local, Remote: remote, State: State(st), Inode: inode})
	}
	return out, nil
}

// parseAddrPort reads ADDRESS:PORT as /proc/net/tcp writes them: the
// address as 32-bit words in hex, each in the machine's byte order (one
// word for IPv4, four for IPv6), the port in hex.
func parseAddrPort(s string) (netip.AddrPort, error) {
	a, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("%q has no port", s)
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%q: port: %w", s, err)
	}
	raw, err := hex.DecodeString(a)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("%q: not 8 or 32 hex digits", s)
	}
	// hex.DecodeString read each word's digits most significant first; the
	// kernel wrote the word as it lies in memory, in the machine's order.
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(raw[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}

// Stat is what a process's /proc/PID/stat says of it that the checks use.
type Stat struct {
	PID, PPID int
	// PGRP is its process group: vitals run starts its workload as the
	// leader of a group of its own.
	PGRP int
	// Comm is its name as the kernel keeps it (commLen bytes at most).
	Comm string
}

// ParseStat reads the text of /proc/PID/stat: PID (COMM) STATE PPID PGRP
// ..., where COMM may hold spaces and parentheses.
func ParseStat(text []byte) (Stat, error) {
	s := string(text)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Stat{}, fmt.Errorf("stat %q: no (COMM)", s)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return Stat{}, fmt.Errorf("stat %q: pid: %w", s, err)
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 3 {
		return Stat{}, fmt.Errorf("stat %q: no ppid and pgrp after the state", s)
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return Stat{}, fmt.Errorf("stat %q: ppid %q and pgrp %q are not numbers", s, f[1], f[2])
	}
	return Stat{PID: pid, PPID: ppid, PGRP: pgrp, Comm: s[open+1 : end]}, nil
}

// ParseCmdline reads the text of /proc/PID/cmdline: the arguments, each
// ended by a NUL. A kernel thread has none.
func ParseCmdline(text []byte) []string {
	text = bytes.TrimRight(text, "\x00")
	if len(text) == 0 {
		return nil
	}
	return strings.Split(string(text), "\x00")
}

// SocketInode is the inode of a socket that a process's fd links to, as
// readlink reads /proc/PID/fd/N: socket:[INODE]. It reports false for a
// link to anything else (a file, a pipe).
func SocketInode(link string) (uint64, bool) {
	s, ok := strings.CutPrefix(link, "socket:[")
	if !ok || !strings.HasSuffix(s, "]") {
		return 0, false
	}
	inode, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64)
	return inode, err == nil
}

// commLen is how much of a program's name the kernel keeps as its comm:
// TASK_COMM_LEN (16) bytes with the NUL.
const commLen = 15

// Named says whether a process whose comm and arguments are these has the
// name name. Its comm is the name ps, top and pgrep show: the file it runs
// (a script's own file, when the kernel runs it through its #! line), cut
// to 15 bytes. It is name; or, for a name longer than that, name's first 15
// bytes with argv[0] or, for a script, argv[1] ending in name, so that a
// longer name sharing the first 15 is not taken for it. Or argv[0]'s base
// name is name, for a program started under a name other than its file's
// (exec -a).
func Named(name, comm string, argv []string) bool {
	base := func(i int) string {
		if i >= len(argv) || argv[i] == "" {
			return ""
		}
		return path.Base(argv[i])
	}
	switch {
	case name == "":
		return false
	case base(0) == name:
		return true
	case len(name) <= commLen:
		return comm == name
	}
	return comm == name[:commLen] && base(1) == name
}

// Tree is the processes of procs that belong to root: root, the members of
// the process group it leads, and every descendant of those, sorted. It is
// nil when root is not among procs (it is not running).
func Tree(root int, procs []Stat) []int {
	children := map[int][]int{}
	var in []int
	for _, p := range procs {
		children[p.PPID] = append(children[p.PPID], p.PID)
		if p.PID == root || p.PGRP == root {
			in = append(in, p.PID)
		}
	}
	if !slices.ContainsFunc(procs, func(p Stat) bool { return p.PID == root }) {
		return nil
	}
	seen := map[int]bool{}
	for len(in) > 0 {
		pid := in[len(in)-1]
		in = in[:len(in)-1]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		in = append(in, children[pid]...)
	}
	out := make([]int, 0, len(seen))
	for pid := range seen {
		out = append(out, pid)
	}
	slices.Sort(out)
	return out
}

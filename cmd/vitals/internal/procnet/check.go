package procnet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// ConnectionSpec is a connection check: the processes hold at least Min
// established TCP connections to Remote, each held for For.
type ConnectionSpec struct {
	// Remote is HOST:PORT, the host resolved at each run (a connection to
	// any address it resolves to counts), or *:PORT for any host.
	// Required.
	Remote string
	// Min is how many connections pass. Default 1.
	Min int
	// For is how long each connection must have been held, from the run
	// that first saw it. Default 0: from the first sighting.
	For time.Duration
	// Processes are whose connections count: by default the workload's.
	Processes
}

// ListeningSpec is a listening check: the processes hold a listening TCP
// socket on Port.
type ListeningSpec struct {
	// Port is the port, from 1 to 65535. Required.
	Port int
	// Address, when given, is an IP address the socket accepts on: it is
	// bound to it, or to every address (0.0.0.0 for an IPv4 address, ::
	// for either). Default "": any.
	Address string
	// Processes are whose sockets count: by default the workload's.
	Processes
}

// Units of the observed values.
const (
	ConnectionsUnit = "connections"
	SocketsUnit     = "sockets"
)

// ErrNoWorkload is a check built with no workload to look at, and no
// processes named.
var ErrNoWorkload = errors.New("no processes named, and no workload")

// Validate says what is wrong with s, each problem a *FieldError, joined.
func (s ConnectionSpec) Validate() error {
	var errs []error
	if _, _, err := ParseRemote(s.Remote); err != nil {
		errs = append(errs, &FieldError{"remote", err})
	}
	if s.Min < 0 {
		errs = append(errs, &FieldError{"min", fmt.Errorf("%d is not at least 1", s.Min)})
	}
	if s.For < 0 {
		errs = append(errs, &FieldError{"for", fmt.Errorf("%v is negative", s.For)})
	}
	return errors.Join(append(errs, s.Processes.validate()...)...)
}

// Validate says what is wrong with s, each problem a *FieldError, joined.
func (s ListeningSpec) Validate() error {
	var errs []error
	if s.Port == 0 {
		errs = append(errs, &FieldError{"port", errors.New("is required")})
	} else if s.Port < 1 || s.Port > 65535 {
		errs = append(errs, &FieldError{"port", fmt.Errorf("%d is not a port from 1 to 65535", s.Port)})
	}
	if s.Address != "" {
		if _, err := netip.ParseAddr(s.Address); err != nil {
			errs = append(errs, &FieldError{"address", fmt.Errorf("%q is not an IP address", s.Address)})
		}
	}
	return errors.Join(append(errs, s.Processes.validate()...)...)
}

// ParseRemote reads a connection's remote, HOST:PORT or *:PORT; host "*"
// is any.
func ParseRemote(remote string) (host string, port uint16, err error) {
	host, p, err := net.SplitHostPort(remote)
	switch {
	case remote == "":
		return "", 0, errors.New("is required: HOST:PORT, or *:PORT for any host")
	case err != nil:
		return "", 0, fmt.Errorf("%q: want HOST:PORT, or *:PORT for any host", remote)
	case host == "":
		return "", 0, fmt.Errorf("%q has no host: give one, or * for any", remote)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("%q: port %q is not a number from 1 to 65535", remote, p)
	}
	return host, uint16(n), nil
}

// Connection builds a connection check. workload gives the pid of the
// workload that runs now, 0 between its runs; nil when there is none, for
// a spec that names its processes. clock measures For; nil: the system
// clock.
//
// A run reads which sockets the processes hold, resolves the remote's
// host, and counts the established connections to it (IPv4 and IPv6; an
// IPv6 socket's connection to an IPv4 address too). It remembers when it
// first saw each connection (by its socket's inode), so that one dropped
// and made again is new. Its observed value is how many count; its output
// says how many there are, to where, and which process holds them.
func Connection(s ConnectionSpec, workload func() int, clock health.Clock) (*probe.Prober, error) {
	if err := s.Validate(); err != nil {
		return nil, probe.Invalid("connection", "%w", err)
	}
	if s.None() && workload == nil {
		return nil, probe.Invalid("connection", "%w", ErrNoWorkload)
	}
	if s.Min == 0 {
		s.Min = 1
	}
	c := &connection{spec: s, workload: workload, now: time.Now, seen: map[uint64]time.Time{}}
	c.host, c.port, _ = ParseRemote(s.Remote)
	if clock != nil {
		c.now = clock.Now
	}
	return probe.New("connection", "connection "+s.Remote, c.measure, nil), nil
}

type connection struct {
	spec     ConnectionSpec
	host     string // "*": any
	port     uint16
	workload func() int
	now      func() time.Time

	mu   sync.Mutex
	seen map[uint64]time.Time // when each connection was first seen, by inode
}

func (c *connection) measure(ctx context.Context) (health.Observation, error) {
	obs := health.Observation{Value: 0, Unit: ConnectionsUnit}
	addrs, err := c.addresses(ctx)
	if err != nil {
		return obs, err
	}
	l, err := look(ctx, c.spec.Processes, c.workload)
	if err != nil {
		return obs, err
	}
	var conns []Socket
	for _, s := range l.sockets {
		if s.State == Established && s.Remote.Port() == c.port && (addrs == nil || slices.Contains(addrs, s.Remote.Addr())) {
			conns = append(conns, s)
		}
	}
	inodes := make([]uint64, len(conns))
	for i, s := range conns {
		inodes[i] = s.Inode
	}
	c.mu.Lock()
	long, wait, next := Held(c.seen, inodes, c.now(), c.spec.For)
	c.seen = next
	c.mu.Unlock()
	obs.Value = len(long)
	out := c.output(addrs, l, conns, len(long))
	if len(long) >= c.spec.Min {
		obs.Message = out
		return obs, nil
	}
	out += fmt.Sprintf("; want %d", c.spec.Min)
	if c.spec.For > 0 {
		out += fmt.Sprintf(" held for %v", c.spec.For)
		if wait > 0 {
			out += fmt.Sprintf(" (the next in %v)", wait.Round(time.Millisecond))
		}
	}
	return obs, errors.New(out + unreadable(l))
}

// addresses are what the remote's host resolves to now; nil for any host.
func (c *connection) addresses(ctx context.Context) ([]netip.Addr, error) {
	if c.host == "*" {
		return nil, nil
	}
	if a, err := netip.ParseAddr(c.host); err == nil {
		return []netip.Addr{a.Unmap().WithZone("")}, nil
	}
	found, err := net.DefaultResolver.LookupNetIP(ctx, "ip", c.host)
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, a := range found {
		if a = a.Unmap().WithZone(""); !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// output says what a run found: how many connections, to where, held by
// whom, and how many of them long enough.
func (c *connection) output(addrs []netip.Addr, l looked, conns []Socket, long int) string {
	if len(conns) == 0 {
		to := fmt.Sprintf("port %d of any host", c.port)
		if addrs != nil {
			to = c.spec.Remote
			if _, err := netip.ParseAddr(c.host); err != nil {
				to += " (" + joinAddrs(addrs) + ")"
			}
		}
		return "no connection to " + to + " " + among(l)
	}
	var to []string
	for _, s := range conns {
		if a := s.Remote.String(); !slices.Contains(to, a) {
			to = append(to, a)
		}
	}
	slices.Sort(to)
	out := fmt.Sprintf("%s to %s, %s", plural(len(conns), "connection"), strings.Join(to, ", "), heldBy(l, conns, "held by"))
	if c.spec.For > 0 {
		out += fmt.Sprintf(", %d of them for %v", long, c.spec.For)
	}
	return out
}

// Held decides which connections count for a check that wants them held
// for hold: those first seen at least hold before now. seen says when each
// connection was first seen, by its socket's inode; held are those found
// now. It returns those that count, how long until the next of the others
// counts (0 when none is left), and what was seen to remember for the next
// run: those still held, a new one as first seen now. A connection no
// longer held is forgotten, so that one made again starts over.
func Held(seen map[uint64]time.Time, held []uint64, now time.Time, hold time.Duration) (long []uint64, wait time.Duration, next map[uint64]time.Time) {
	next = make(map[uint64]time.Time, len(held))
	for _, inode := range held {
		first, ok := seen[inode]
		if !ok {
			first = now
		}
		next[inode] = first
		switch left := first.Add(hold).Sub(now); {
		case left <= 0:
			long = append(long, inode)
		case wait == 0 || left < wait:
			wait = left
		}
	}
	return long, wait, next
}

// Listening builds a listening check, as Connection builds a connection
// check. A run reads which sockets the processes hold, and counts the
// listening ones on the port (and the address). Its observed value is how
// many there are; its output says where they listen, and which process
// holds them.
func Listening(s ListeningSpec, workload func() int) (*probe.Prober, error) {
	if err := s.Validate(); err != nil {
		return nil, probe.Invalid("listening", "%w", err)
	}
	if s.None() && workload == nil {
		return nil, probe.Invalid("listening", "%w", ErrNoWorkload)
	}
	at := netip.AddrPortFrom(netip.Addr{}, uint16(s.Port))
	where := ":" + strconv.Itoa(s.Port)
	if s.Address != "" {
		a, _ := netip.ParseAddr(s.Address)
		at = netip.AddrPortFrom(a.Unmap().WithZone(""), uint16(s.Port))
		where = at.String()
	}
	l := &listening{spec: s, at: at, workload: workload}
	return probe.New("listening", "listening "+where, l.measure, nil), nil
}

type listening struct {
	spec     ListeningSpec
	at       netip.AddrPort // an invalid address: any
	workload func() int
}

func (ls *listening) measure(ctx context.Context) (health.Observation, error) {
	obs := health.Observation{Value: 0, Unit: SocketsUnit}
	l, err := look(ctx, ls.spec.Processes, ls.workload)
	if err != nil {
		return obs, err
	}
	var on, others []Socket
	for _, s := range l.sockets {
		switch {
		case s.State != Listen || s.Local.Port() != ls.at.Port():
		case Accepts(s.Local.Addr(), ls.at.Addr()):
			on = append(on, s)
		default:
			others = append(others, s)
		}
	}
	obs.Value = len(on)
	if len(on) > 0 {
		obs.Message = "listening on " + joinSockets(on) + ", " + heldBy(l, on, "by")
		return obs, nil
	}
	out := fmt.Sprintf("nothing listens on port %d", ls.at.Port())
	if ls.at.Addr().IsValid() {
		out = "nothing listens on " + ls.at.String()
	}
	out += " " + among(l)
	if len(others) > 0 {
		out += "; on " + joinSockets(others) + " only"
	}
	return obs, errors.New(out + unreadable(l))
}

// Accepts says whether a socket bound to bound accepts on want: bound is
// want, or the unspecified address of want's family, or :: (which takes
// IPv4 too, unless IPV6_V6ONLY, which /proc does not show). Any address
// accepts an invalid want (none asked for).
func Accepts(bound, want netip.Addr) bool {
	switch {
	case !want.IsValid(), bound == want:
		return true
	case bound == netip.IPv6Unspecified():
		return true
	}
	return bound == netip.IPv4Unspecified() && want.Is4()
}

// heldBy says which processes hold sockets, after verb: "held by pid 41
// (st2rulesengine)"; "in this network namespace" when the check read them
// all.
func heldBy(l looked, sockets []Socket, verb string) string {
	if l.holder == nil {
		return "in this network namespace"
	}
	holders := map[int]Stat{}
	for _, s := range sockets {
		h := l.holder[s.Inode]
		holders[h.PID] = h
	}
	var who []string
	for _, pid := range slices.Sorted(maps.Keys(holders)) {
		who = append(who, processName(holders[pid]))
	}
	return verb + " " + pidList(who)
}

// among says which processes a run looked at, for a run that found none:
// "among pid 41 (app) and 2 processes under it".
func among(l looked) string {
	if l.holder == nil {
		return "in this network namespace"
	}
	var who []string
	for _, r := range l.roots {
		who = append(who, processName(r))
	}
	out := "among " + pidList(who)
	switch {
	case l.under > 0 && len(l.roots) == 1:
		out += fmt.Sprintf(" and %s under it", plural(l.under, "process"))
	case l.under > 0:
		out += fmt.Sprintf(" and %s under them", plural(l.under, "process"))
	}
	return out
}

// unreadable says which processes a run could not read, after a failure.
func unreadable(l looked) string {
	if len(l.unreadable) == 0 {
		return ""
	}
	var each []string
	for _, err := range l.unreadable {
		each = append(each, err.Error())
	}
	return fmt.Sprintf("; could not read %s (vitals needs the processes' user, or CAP_SYS_PTRACE)", strings.Join(each, ", "))
}

func processName(s Stat) string { return fmt.Sprintf("%d (%s)", s.PID, s.Comm) }

// pidList is "pid 41 (app)", or "pids 41 (app), 57 (app)".
func pidList(who []string) string {
	if len(who) == 1 {
		return "pid " + who[0]
	}
	return "pids " + strings.Join(who, ", ")
}

func plural(n int, what string) string {
	switch {
	case n == 1:
		return "1 " + what
	case strings.HasSuffix(what, "s"):
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func joinAddrs(addrs []netip.Addr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

func joinSockets(sockets []Socket) string {
	var s []string
	for _, so := range sockets {
		if a := so.Local.String(); !slices.Contains(s, a) {
			s = append(s, a)
		}
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}

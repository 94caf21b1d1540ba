package procnet_test

import (
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/procnet"
)

// line is a socket as the tests write it: LOCAL REMOTE STATE INODE.
func line(s procnet.Socket) string {
	state := map[procnet.State]string{procnet.Established: "ESTABLISHED", procnet.Listen: "LISTEN", 0x06: "TIME_WAIT"}[s.State]
	return fmt.Sprintf("%s %s %s %d", s.Local, s.Remote, state, s.Inode)
}

// What /proc wrote (testdata/README) reads as the sockets it was: IPv4,
// IPv6, an IPv6 socket's connection to an IPv4 address as that address,
// and a TIME_WAIT line that no process holds.
func TestParseTCPReadsWhatProcWrote(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"testdata/tcp", []string{
			"127.0.0.1:5672 0.0.0.0:0 LISTEN 709449",
			"0.0.0.0:2024 0.0.0.0:0 LISTEN 637",
			"127.0.0.1:60220 127.0.0.1:24290 TIME_WAIT 0",
			"127.0.0.1:5672 127.0.0.1:47406 ESTABLISHED 709453",
			"127.0.0.1:47406 127.0.0.1:5672 ESTABLISHED 709452",
		}},
		{"testdata/tcp6", []string{
			"[::1]:8080 [::]:0 LISTEN 709450",
			"[::]:9090 [::]:0 LISTEN 709451",
			"[::1]:41214 [::1]:8080 ESTABLISHED 709454",
			"127.0.0.1:47408 127.0.0.1:5672 ESTABLISHED 709456",
			"[::1]:8080 [::1]:41214 ESTABLISHED 709455",
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			text, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			sockets, err := procnet.ParseTCP(text)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range sockets {
				got = append(got, line(s))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestParseTCPSaysWhatIsWrongWithALine(t *testing.T) {
	header := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	for _, tc := range []struct{ text, want string }{
		{header + "   0: 0100007F:1628 00000000:0000 0A\n", `line 2: 4 fields, want at least 10: "   0: 0100007F:1628 00000000:0000 0A"`},
		{header + "   0: 0100007F 00000000:0000 0A 0:0 0:0 0 0 0 1\n", `line 2: local address: "0100007F" has no port`},
		{header + "   0: 0100007F:1628 0000:0000 0A 0:0 0:0 0 0 0 1\n", `line 2: remote address: "0000:0000": not 8 or 32 hex digits`},
		{header + "   0: 0100007F:1628 00000000:0000 XY 0:0 0:0 0 0 0 1\n", `line 2: state "XY": strconv.ParseUint: parsing "XY": invalid syntax`},
		{header + "   0: 0100007F:1628 00000000:0000 0A 0:0 0:0 0 0 0 -1\n", `line 2: inode "-1": strconv.ParseUint: parsing "-1": invalid syntax`},
	} {
		if _, err := procnet.ParseTCP([]byte(tc.text)); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %s", tc.text, err, tc.want)
		}
	}
	if s, err := procnet.ParseTCP([]byte(header)); err != nil || s != nil {
		t.Errorf("a header alone: %v, %v", s, err)
	}
}

// Stat lines as /proc wrote them: a name with spaces and parentheses, a
// kernel thread, a name cut to 15 bytes.
func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		text string
		want procnet.Stat
		err  string
	}{
		{text: "6039 (cat) R 6033 6033 1430 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 667879 3133440 407\n",
			want: procnet.Stat{PID: 6039, PPID: 6033, PGRP: 6033, Comm: "cat"}},
		{text: "10457 (x) (y z) S 10456 10453 1430 0 -1 4194304 133 0 0 0 0 0 0 0 20 0 1 0 688824\n",
			want: procnet.Stat{PID: 10457, PPID: 10456, PGRP: 10453, Comm: "x) (y z"}},
		{text: "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 26 0 0\n",
			want: procnet.Stat{PID: 2, PPID: 0, PGRP: 0, Comm: "kthreadd"}},
		{text: "10479 (averyveryverylo) S 10478 10453 1430 0 -1\n",
			want: procnet.Stat{PID: 10479, PPID: 10478, PGRP: 10453, Comm: "averyveryverylo"}},
		{text: "10479 averyveryverylo S 10478 10453", err: `stat "10479 averyveryverylo S 10478 10453": no (COMM)`},
		{text: "10479 (a) S 10478", err: `stat "10479 (a) S 10478": no ppid and pgrp after the state`},
		{text: "x (a) S 1 1", err: `stat "x (a) S 1 1": pid: strconv.Atoi: parsing "x": invalid syntax`},
		{text: "3 (a) S one 1", err: `stat "3 (a) S one 1": ppid "one" and pgrp "1" are not numbers`},
	} {
		got, err := procnet.ParseStat([]byte(tc.text))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: %+v, %v; want the error %s", tc.text, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.text, got, err, tc.want)
		}
	}
}

func TestParseCmdline(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"./x) (y z\x002\x00", []string{"./x) (y z", "2"}},
		{"/usr/bin/python3\x00./st2workflowengine\x00", []string{"/usr/bin/python3", "./st2workflowengine"}},
		{"", nil}, // a kernel thread
		{"nginx: worker process\x00\x00\x00", []string{"nginx: worker process"}},
	} {
		if got := procnet.ParseCmdline([]byte(tc.text)); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestSocketInode(t *testing.T) {
	for _, tc := range []struct {
		link  string
		inode uint64
		ok    bool
	}{
		{"socket:[709449]", 709449, true},
		{"pipe:[709426]", 0, false},
		{"/dev/null", 0, false},
		{"anon_inode:[eventpoll]", 0, false},
		{"socket:[x]", 0, false},
		{"socket:[709449", 0, false},
	} {
		if inode, ok := procnet.SocketInode(tc.link); inode != tc.inode || ok != tc.ok {
			t.Errorf("%q: %d, %v; want %d, %v", tc.link, inode, ok, tc.inode, tc.ok)
		}
	}
}

// A process is named by its comm, as ps and pgrep show it, or by argv[0];
// a name longer than a comm holds, by its first 15 bytes and the command
// line. The comms and command lines are those Linux shows for each case.
func TestNamed(t *testing.T) {
	for _, tc := range []struct {
		why        string
		name, comm string
		argv       []string
		want       bool
	}{
		{"its comm", "rabbitmq-server", "rabbitmq-server", []string{"/bin/sh", "/usr/sbin/rabbitmq-server"}, true},
		{"its argv[0]'s base name", "st2api", "gunicorn", []string{"/opt/st2/bin/st2api", "-k", "eventlet"}, true},
		{"a script started by its #! line: comm is its file's name", "st2rulesengine", "st2rulesengine", []string{"/opt/st2/bin/python", "/opt/st2/bin/st2rulesengine"}, true},
		{"a long name: comm is its first 15 bytes, argv[1] the script", "st2workflowengine", "st2workflowengi", []string{"/usr/bin/python3", "./st2workflowengine"}, true},
		{"a long name: comm is its first 15 bytes, argv[0] the program", "averyveryverylongname", "averyveryverylo", []string{"/tmp/averyveryverylongname", "1"}, true},
		{"a longer name of the same 15 bytes", "st2workflowengine", "st2workflowengi", []string{"/usr/bin/python3", "./st2workflowengine-x"}, false},
		{"a long name whose 15 bytes are not the comm", "st2workflowengine", "python3", []string{"/usr/bin/python3", "./st2workflowengine"}, false},
		{"another program", "rabbitmq-server", "beam.smp", []string{"/usr/lib/erlang/erts/bin/beam.smp", "-W", "w"}, false},
		{"its comm but a name given longer", "cat", "cat", []string{"cat"}, true},
		{"a kernel thread", "kthreadd", "kthreadd", nil, true},
		{"a kernel thread's name, not its own", "kworker", "kthreadd", nil, false},
		{"an argument that is not argv[0] or a script", "st2api", "vim", []string{"vim", "st2api"}, false},
		{"no name", "", "", nil, false},
	} {
		if got := procnet.Named(tc.name, tc.comm, tc.argv); got != tc.want {
			t.Errorf("%s: Named(%q, %q, %q) = %v, want %v", tc.why, tc.name, tc.comm, tc.argv, got, tc.want)
		}
	}
}

// A process's tree is itself, its descendants, and the members of the
// group it leads with theirs.
func TestTree(t *testing.T) {
	procs := []procnet.Stat{
		{PID: 1, PPID: 0, PGRP: 1, Comm: "vitals"},
		{PID: 10, PPID: 1, PGRP: 10, Comm: "st2actionrunner"}, // the workload, leading its group
		{PID: 11, PPID: 10, PGRP: 10, Comm: "python3"},        // a child
		{PID: 12, PPID: 11, PGRP: 12, Comm: "ssh"},            // a grandchild in a group of its own
		{PID: 13, PPID: 1, PGRP: 10, Comm: "daemon"},          // forked away, left to vitals, still in the group
		{PID: 14, PPID: 13, PGRP: 14, Comm: "worker"},         // its child
		{PID: 20, PPID: 1, PGRP: 20, Comm: "exec-check"},      // vitals's own
		{PID: 21, PPID: 20, PGRP: 20, Comm: "curl"},
	}
	for _, tc := range []struct {
		root int
		want []int
	}{
		{10, []int{10, 11, 12, 13, 14}},
		{11, []int{11, 12}},
		{12, []int{12}},
		{20, []int{20, 21}},
		{1, []int{1, 10, 11, 12, 13, 14, 20, 21}},
		{99, nil}, // not running
	} {
		if got := procnet.Tree(tc.root, procs); !slices.Equal(got, tc.want) {
			t.Errorf("Tree(%d) = %v, want %v", tc.root, got, tc.want)
		}
	}
}

// A connection counts once it has been held for long enough since it was
// first seen; one no longer held is forgotten, so one made again starts
// over.
func TestHeld(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		why      string
		seen     map[uint64]time.Time
		held     []uint64
		now      time.Time
		hold     time.Duration
		long     []uint64
		wait     time.Duration
		nextSeen map[uint64]time.Time
	}{
		{"with no hold, a connection counts when first seen", nil, []uint64{7}, at(0), 0,
			[]uint64{7}, 0, map[uint64]time.Time{7: at(0)}},
		{"first seen now, it waits the hold", nil, []uint64{7}, at(0), 10 * time.Second,
			nil, 10 * time.Second, map[uint64]time.Time{7: at(0)}},
		{"seen before, it waits what is left", map[uint64]time.Time{7: at(0)}, []uint64{7}, at(4), 10 * time.Second,
			nil, 6 * time.Second, map[uint64]time.Time{7: at(0)}},
		{"held for the hold, it counts", map[uint64]time.Time{7: at(0)}, []uint64{7}, at(10), 10 * time.Second,
			[]uint64{7}, 0, map[uint64]time.Time{7: at(0)}},
		{"the next to count is the soonest", map[uint64]time.Time{7: at(0), 8: at(3), 9: at(5)}, []uint64{7, 8, 9}, at(12), 10 * time.Second,
			[]uint64{7}, time.Second, map[uint64]time.Time{7: at(0), 8: at(3), 9: at(5)}},
		{"dropped, it is forgotten", map[uint64]time.Time{7: at(0), 8: at(0)}, []uint64{8}, at(20), 10 * time.Second,
			[]uint64{8}, 0, map[uint64]time.Time{8: at(0)}},
		{"made again (a new socket), it starts over", map[uint64]time.Time{8: at(0)}, []uint64{8, 9}, at(20), 10 * time.Second,
			[]uint64{8}, 10 * time.Second, map[uint64]time.Time{8: at(0), 9: at(20)}},
		{"none held", map[uint64]time.Time{7: at(0)}, nil, at(20), 10 * time.Second,
			nil, 0, map[uint64]time.Time{}},
	} {
		long, wait, next := procnet.Held(tc.seen, tc.held, tc.now, tc.hold)
		if !slices.Equal(long, tc.long) || wait != tc.wait || !mapsEqual(next, tc.nextSeen) {
			t.Errorf("%s: %v, %v, %v; want %v, %v, %v", tc.why, long, wait, next, tc.long, tc.wait, tc.nextSeen)
		}
	}
}

func mapsEqual(a, b map[uint64]time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !w.Equal(v) {
			return false
		}
	}
	return true
}

func TestAccepts(t *testing.T) {
	a := netip.MustParseAddr
	for _, tc := range []struct {
		bound, want string
		ok          bool
	}{
		{"127.0.0.1", "", true},
		{"127.0.0.1", "127.0.0.1", true},
		{"127.0.0.1", "10.0.0.5", false},
		{"0.0.0.0", "10.0.0.5", true},
		{"0.0.0.0", "::1", false},
		{"::", "10.0.0.5", true},
		{"::", "::1", true},
		{"::1", "::1", true},
		{"::1", "127.0.0.1", false},
	} {
		var want netip.Addr
		if tc.want != "" {
			want = a(tc.want)
		}
		if got := procnet.Accepts(a(tc.bound), want); got != tc.ok {
			t.Errorf("Accepts(%s, %q) = %v, want %v", tc.bound, tc.want, got, tc.ok)
		}
	}
}

func TestParseRemote(t *testing.T) {
	for _, tc := range []struct {
		remote, host string
		port         uint16
		err          string
	}{
		{remote: "rabbitmq:5672", host: "rabbitmq", port: 5672},
		{remote: "*:5672", host: "*", port: 5672},
		{remote: "[::1]:5672", host: "::1", port: 5672},
		{remote: "10.0.0.5:5672", host: "10.0.0.5", port: 5672},
		{remote: "rabbitmq", err: `"rabbitmq": want HOST:PORT, or *:PORT for any host`},
		{remote: ":5672", err: `":5672" has no host: give one, or * for any`},
		{remote: "rabbitmq:amqp", err: `"rabbitmq:amqp": port "amqp" is not a number from 1 to 65535`},
		{remote: "rabbitmq:0", err: `"rabbitmq:0": port "0" is not a number from 1 to 65535`},
		{remote: "rabbitmq:65536", err: `"rabbitmq:65536": port "65536" is not a number from 1 to 65535`},
		{remote: "", err: `is required: HOST:PORT, or *:PORT for any host`},
	} {
		host, port, err := procnet.ParseRemote(tc.remote)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: %v, want %s", tc.remote, err, tc.err)
			}
			continue
		}
		if err != nil || host != tc.host || port != tc.port {
			t.Errorf("%q: %q, %d, %v; want %q, %d", tc.remote, host, port, err, tc.host, tc.port)
		}
	}
}

func TestSpecsSayWhatIsWrongWithEachField(t *testing.T) {
	for _, tc := range []struct {
		spec interface{ Validate() error }
		want string
	}{
		{procnet.ConnectionSpec{Remote: "rabbitmq:5672"}, ""},
		{procnet.ConnectionSpec{Remote: "rabbitmq", Min: -1, For: -time.Second},
			"remote \"rabbitmq\": want HOST:PORT, or *:PORT for any host\nmin -1 is not at least 1\nfor -1s is negative"},
		{procnet.ConnectionSpec{Remote: "*:5672", Processes: procnet.Processes{PIDFile: "/run/a.pid", Name: "a/b", AnyProcess: true}},
			"process pid-file names the processes already: give one of the two\nany-process pid-file names the processes already: give one of the two\n" +
				`process "a/b" is a path: give the process's name, as ps shows it (its file's base name)`},
		{procnet.ListeningSpec{Port: 8080, Address: "0.0.0.0"}, ""},
		{procnet.ListeningSpec{Port: 0, Address: "localhost", Processes: procnet.Processes{PID: -1}},
			"port is required\naddress \"localhost\" is not an IP address\npid -1 is not a pid"},
	} {
		err := tc.spec.Validate()
		if got := fmt.Sprint(err); (err == nil) != (tc.want == "") || err != nil && got != tc.want {
			t.Errorf("%+v: %v\nwant %s", tc.spec, err, tc.want)
		}
	}
}

package probe_test

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// dnsZone maps a lower-case name with its trailing dot to its records. A name
// that is not in it does not exist (NXDOMAIN); a name in it without records
// of the type asked exists with no answer.
type dnsZone map[string][]dnsRecord

// dnsRecord is a resource record's type and its data, already encoded.
type dnsRecord struct {
	typ  uint16
	data []byte
}

// DNS record types, from RFC 1035 and RFC 3596.
const (
	typeA     = 1
	typeNS    = 2
	typeCNAME = 5
	typeMX    = 15
	typeTXT   = 16
	typeAAAA  = 28
)

func aRecord(addr string) dnsRecord {
	a := netip.MustParseAddr(addr)
	if a.Is4() {
		return dnsRecord{typeA, a.AsSlice()}
	}
	return dnsRecord{typeAAAA, a.AsSlice()}
}

func txtRecord(text string) dnsRecord {
	return dnsRecord{typeTXT, append([]byte{byte(len(text))}, text...)}
}

func cnameRecord(target string) dnsRecord { return dnsRecord{typeCNAME, encodeName(target)} }

func mxRecord(pref uint16, host string) dnsRecord {
	return dnsRecord{typeMX, append(binary.BigEndian.AppendUint16(nil, pref), encodeName(host)...)}
}

// encodeName writes a name as DNS labels, uncompressed.
func encodeName(name string) []byte {
	var b []byte
	for label := range strings.SplitSeq(strings.TrimSuffix(name, "."), ".") {
		b = append(append(b, byte(len(label))), label...)
	}
	return append(b, 0)
}

// serveDNS answers DNS queries over UDP on 127.0.0.1 from zone, and returns
// its address. It stops when the test ends.
func serveDNS(t *testing.T, zone dnsZone) string {
	return serveUDP(t, func(query []byte) []byte { return answerDNS(query, zone) })
}

// answerDNS answers a query from zone, authoritatively, or returns nil for
// bytes that are not a query. The reply echoes the question and points each
// answer's name at it (0xC00C: offset 12, just after the header). A CNAME of
// the name answers every type, as a real server does.
func answerDNS(query []byte, zone dnsZone) []byte {
	if len(query) < 12 {
		return nil
	}
	var labels []string
	i := 12
	for i < len(query) && query[i] != 0 {
		end := i + 1 + int(query[i])
		if end > len(query) {
			return nil
		}
		labels = append(labels, string(query[i+1:end]))
		i = end
	}
	if i+5 > len(query) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(query[i+1:])
	question := query[12 : i+5]
	records, exists := zone[strings.ToLower(strings.Join(labels, "."))+"."]
	var answers []dnsRecord
	for _, r := range records {
		if r.typ == qtype || r.typ == typeCNAME {
			answers = append(answers, r)
		}
	}
	var rcode byte
	if !exists {
		rcode = 3 // NXDOMAIN
	}
	reply := []byte{
		query[0], query[1], // ID
		0x84 | query[2]&0x01, // QR, AA, and RD as asked
		0x80 | rcode,         // RA
		0, 1,                 // one question
		0, byte(len(answers)),
		0, 0, 0, 0, // no authority, no additional records
	}
	reply = append(reply, question...)
	for _, r := range answers {
		reply = append(reply, 0xC0, 0x0C)
		reply = binary.BigEndian.AppendUint16(reply, r.typ)
		reply = append(reply, 0, 1)        // class IN
		reply = append(reply, 0, 0, 0, 60) // TTL
		reply = binary.BigEndian.AppendUint16(reply, uint16(len(r.data)))
		reply = append(reply, r.data...)
	}
	return reply
}

var testZone = dnsZone{
	"app.test.":    {aRecord("10.0.0.7"), aRecord("10.0.0.8"), aRecord("fd00::7")},
	"www.test.":    {cnameRecord("app.test.")},
	"alias.test.":  {cnameRecord("www.test.")},
	"loop1.test.":  {cnameRecord("loop2.test.")},
	"loop2.test.":  {cnameRecord("loop1.test.")},
	"mail.test.":   {mxRecord(10, "mx1.test."), mxRecord(20, "MX2.test.")},
	"config.test.": {txtRecord("v=1; ready"), txtRecord("owner=ops")},
	"many.test.": {aRecord("10.0.1.1"), aRecord("10.0.1.2"), aRecord("10.0.1.3"), aRecord("10.0.1.4"),
		aRecord("10.0.1.5"), aRecord("10.0.1.6"), aRecord("10.0.1.7")},
}

// measureDNS builds a DNS probe and runs it once, as a Monitor would.
func measureDNS(t *testing.T, spec probe.DNSSpec) health.Result {
	t.Helper()
	p, err := probe.DNS(spec)
	if err != nil {
		t.Fatalf("DNS(%+v): %v", spec, err)
	}
	return health.Run(context.Background(), p, 5*time.Second)
}

func TestDNSPassesWhenTheExpectedAddressesAreAmongTheAnswers(t *testing.T) {
	server := serveDNS(t, testZone)
	p, err := probe.DNS(probe.DNSSpec{Name: "app.test", Type: "a", Expect: []string{"10.0.0.8"}, Server: server})
	if err != nil {
		t.Fatal(err)
	}
	if want := "dns app.test A @" + server; p.Kind() != "dns" || p.String() != want {
		t.Errorf("kind %q, target %q; want dns, %q", p.Kind(), p.String(), want)
	}
	r := health.Run(context.Background(), p, 5*time.Second)
	if !r.OK || r.Output != "A 10.0.0.7, 10.0.0.8" {
		t.Fatalf("result %+v, want a pass with %q", r, "A 10.0.0.7, 10.0.0.8")
	}
	if r.ObservedValue != 2 || r.ObservedUnit != "records" {
		t.Errorf("observed %v %s, want 2 records", r.ObservedValue, r.ObservedUnit)
	}
}

func TestDNSLooksUpAnyAddressByDefault(t *testing.T) {
	server := serveDNS(t, testZone)
	r := measureDNS(t, probe.DNSSpec{Name: "app.test", Expect: []string{"fd00::7", "::ffff:10.0.0.7"}, Server: server})
	if !r.OK || r.ObservedValue != 3 || !strings.HasPrefix(r.Output, "A/AAAA ") {
		t.Fatalf("result %+v, want a pass with the 3 addresses", r)
	}
}

func TestDNSFailsWhenAnExpectedAnswerIsMissing(t *testing.T) {
	server := serveDNS(t, testZone)
	r := measureDNS(t, probe.DNSSpec{Name: "app.test", Type: "A", Expect: []string{"10.0.0.7", "10.0.0.9"}, Server: server})
	if want := "answered 10.0.0.7, 10.0.0.8, not 10.0.0.9"; r.OK || r.Output != want {
		t.Fatalf("result %+v, want a failure %q", r, want)
	}
}

func TestDNSFailsWithTheResolversErrorWhenTheNameDoesNotExist(t *testing.T) {
	server := serveDNS(t, testZone)
	r := measureDNS(t, probe.DNSSpec{Name: "nosuch.test", Server: server})
	if want := "lookup nosuch.test on " + server + ": no such host"; r.OK || r.Output != want {
		t.Fatalf("result %+v, want a failure %q", r, want)
	}
}

func TestDNSComparesTXTRecordsAsWholeStrings(t *testing.T) {
	server := serveDNS(t, testZone)
	r := measureDNS(t, probe.DNSSpec{Name: "config.test", Type: "TXT", Expect: []string{"owner=ops"}, Server: server})
	if want := `TXT "v=1; ready", owner=ops`; !r.OK || r.Output != want {
		t.Fatalf("result %+v, want a pass with %q", r, want)
	}
	r = measureDNS(t, probe.DNSSpec{Name: "config.test", Type: "TXT", Expect: []string{"v=1"}, Server: server})
	if want := `answered "v=1; ready", owner=ops, not v=1`; r.OK || r.Output != want {
		t.Fatalf("result %+v, want a failure %q", r, want)
	}
}

func TestDNSComparesNamesWithoutCaseOrTrailingDot(t *testing.T) {
	server := serveDNS(t, testZone)
	r := measureDNS(t, probe.DNSSpec{Name: "www.test", Type: "CNAME", Expect: []string{"APP.test."}, Server: server})
	if !r.OK || r.Output != "CNAME app.test" {
		t.Fatalf("CNAME result %+v, want a pass with %q", r, "CNAME app.test")
	}
	r = measureDNS(t, probe.DNSSpec{Name: "mail.test", Type: "MX", Expect: []string{"mx2.test"}, Server: server})
	if !r.OK || r.Output != "MX mx1.test, mx2.test" {
		t.Fatalf("MX result %+v, want a pass with %q", r, "MX mx1.test, mx2.test")
	}
}

// Go's LookupCNAME answers either end of a chain of aliases, by which of its
// queries is answered first; this server answers only the first link, as a
// server that does not recurse does.
func TestDNSAnswersACNAMEWithTheEndOfTheChainOfAliases(t *testing.T) {
	server := serveDNS(t, testZone)
	for range 5 {
		r := measureDNS(t, probe.DNSSpec{Name: "alias.test", Type: "CNAME", Expect: []string{"app.test"}, Server: server})
		if !r.OK || r.Output != "CNAME app.test" || r.ObservedValue != 1 {
			t.Fatalf("alias.test to www.test to app.test: %+v, want a pass with %q", r, "CNAME app.test")
		}
	}
	r := measureDNS(t, probe.DNSSpec{Name: "loop1.test", Type: "CNAME", Server: server})
	if want := "more than 16 aliases in a row"; r.OK || r.Output != want {
		t.Fatalf("a loop of aliases: %+v, want a failure %q", r, want)
	}
}

func TestDNSListsAtMostFiveAnswers(t *testing.T) {
	server := serveDNS(t, testZone)
	r := measureDNS(t, probe.DNSSpec{Name: "many.test", Type: "A", Server: server})
	want := "A 10.0.1.1, 10.0.1.2, 10.0.1.3, 10.0.1.4, 10.0.1.5 and 2 more"
	if !r.OK || r.Output != want || r.ObservedValue != 7 {
		t.Fatalf("result %+v, want a pass with %q and 7 records", r, want)
	}
}

func TestDNSRejectsABadSpecWhenBuilt(t *testing.T) {
	tests := []struct {
		spec probe.DNSSpec
		want string
	}{
		{probe.DNSSpec{}, "dns probe: name is required"},
		{probe.DNSSpec{Name: "http://example.com/"}, `dns probe: name "http://example.com/" is not a domain name`},
		{probe.DNSSpec{Name: "example.com", Type: "SRV"}, `dns probe: type "SRV" is not one of A, AAAA, CNAME, MX, TXT, NS`},
		{probe.DNSSpec{Name: "example.com", Expect: []string{"example.net"}}, `dns probe: expected answer "example.net" is not an IP address`},
		{probe.DNSSpec{Name: "example.com", Type: "A", Expect: []string{"2001:db8::1"}}, `dns probe: expected answer "2001:db8::1" is not an IPv4 address, so never an A record`},
		{probe.DNSSpec{Name: "example.com", Type: "AAAA", Expect: []string{"192.0.2.1"}}, `dns probe: expected answer "192.0.2.1" is not an IPv6 address, so never an AAAA record`},
		{probe.DNSSpec{Name: "example.com", Type: "MX", Expect: []string{"mx 1"}}, `dns probe: expected answer "mx 1" is not a domain name`},
		{probe.DNSSpec{Name: "example.com", Server: "127.0.0.1:x"}, `dns probe: server "127.0.0.1:x": port "x" is not a number from 1 to 65535`},
		{probe.DNSSpec{Name: "example.com", Server: "127.0.0.1:65536"}, `dns probe: server "127.0.0.1:65536": port "65536" is not a number from 1 to 65535`},
		{probe.DNSSpec{Name: "example.com", Server: ":53"}, `dns probe: server ":53" has no host`},
		{probe.DNSSpec{Name: "example.com", Server: "dns server"}, `dns probe: server "dns server": "dns server" is neither an IP address nor a host name`},
	}
	for _, tt := range tests {
		if _, err := probe.DNS(tt.spec); err == nil || err.Error() != tt.want {
			t.Errorf("DNS(%+v):\n got %v\nwant %s", tt.spec, err, tt.want)
		}
	}
}

func TestDNSServerPortDefaultsTo53(t *testing.T) {
	for server, want := range map[string]string{
		"192.0.2.53":     "dns example.com A/AAAA @192.0.2.53:53",
		"2001:db8::53":   "dns example.com A/AAAA @[2001:db8::53]:53",
		"[2001:db8::53]": "dns example.com A/AAAA @[2001:db8::53]:53",
		"ns.example.net": "dns example.com A/AAAA @ns.example.net:53",
	} {
		p, err := probe.DNS(probe.DNSSpec{Name: "example.com", Server: server})
		if err != nil || p.String() != want {
			t.Errorf("server %q: target %v (err %v), want %q", server, p, err, want)
		}
	}
}

func TestDNSFailsAtItsTimeoutWhenTheServerNeverAnswers(t *testing.T) {
	server := silentUDP(t)
	for _, typ := range []string{"", "TXT"} { // addresses and other records take different paths in Go
		p, err := probe.DNS(probe.DNSSpec{Name: "app.test", Type: typ, Server: server})
		if err != nil {
			t.Fatal(err)
		}
		assertFailsAtTimeout(t, p)
	}
}

// silentUDP reads datagrams on 127.0.0.1 and never answers them.
func silentUDP(t *testing.T) string {
	return serveUDP(t, func([]byte) []byte { return nil })
}

// serveUDP answers each datagram on 127.0.0.1 with what reply makes of it
// (nothing for nil) until the test ends, and returns its address.
func serveUDP(t *testing.T, reply func([]byte) []byte) string {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		conn.Close()
		<-done
	})
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			if answer := reply(buf[:n]); answer != nil {
				conn.WriteTo(answer, from)
			}
		}
	}()
	return conn.LocalAddr().String()
}

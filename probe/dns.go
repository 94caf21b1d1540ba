package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/vitals-dev/vitals/health"
)

// DNSSpec is a DNS check: a name whose lookup must answer and, optionally,
// include given records. It tells a workload that its dependencies' names
// resolve (a Kubernetes service, a database host) before it is ready.
type DNSSpec struct {
	// Name is the name to look up. As with the system's resolver, a name
	// with fewer dots than resolv.conf's ndots is tried with its search
	// domains first; a trailing dot stops that. Required.
	Name string
	// Type is the record type: "A", "AAAA", "CNAME", "MX", "TXT" or "NS", in
	// any case. Default: any address, A or AAAA, which is what a client of
	// the name needs.
	Type string
	// Expect lists answers that must all be among those of the lookup:
	// addresses for A and AAAA (compared as addresses, so "::ffff:1.2.3.4"
	// is 1.2.3.4), host names for CNAME, MX and NS (compared without case or
	// trailing dot), and whole strings for TXT. For CNAME, the answer is the
	// final canonical name, the end of the chain of aliases, which the probe
	// follows as Go's resolver does: with www.example.com an alias of
	// web.example.com and that one an alias of lb.example.com, expect
	// lb.example.com. Default: any answer passes.
	Expect []string
	// Server is host:port of the DNS server to ask instead of the system's;
	// the port defaults to 53. Default: the servers of /etc/resolv.conf.
	Server string
}

// The comparison of answers, by record type.
const (
	compareAddr = iota // as netip.Addr
	compareName        // without case or trailing dot
	compareText        // byte for byte
)

// dnsTypes are the record types a DNS probe looks up, and how their answers
// compare. "" is any address.
var dnsTypes = map[string]int{
	"": compareAddr, "A": compareAddr, "AAAA": compareAddr,
	"CNAME": compareName, "MX": compareName, "NS": compareName,
	"TXT": compareText,
}

// maxShown caps the answers a message lists: a name with dozens of addresses
// would fill the 1 KiB of a result's output.
const maxShown = 5

// DNS builds a DNS probe. It uses Go's own resolver, so that it behaves the
// same on every system and every lookup ends with its context's deadline.
// Addresses are looked up in /etc/hosts first, as the system does, even when
// Server is set. With Server set, every query goes to it, over UDP and over
// TCP for an answer too long for UDP.
//
// A run passes when the lookup answers at least one record and every
// expected one is among them, saying the type and the answers ("A 1.2.3.4,
// 5.6.7.8"). A failure says why, without repeating the name, which the
// check's target names: Go's resolver error ("lookup nosuch.invalid on
// 127.0.0.53:53: no such host", naming Server when it is set), "no records",
// or the answers and what they lack ("answered 1.2.3.4, not 5.6.7.8"). The
// observed value is how many records answered.
func DNS(s DNSSpec) (*Prober, error) {
	if s.Name == "" {
		return nil, Invalid("dns", "name is required")
	}
	if !validDomainName(s.Name) {
		return nil, Invalid("dns", "name %q is not a domain name", s.Name)
	}
	typ := strings.ToUpper(s.Type)
	compare, ok := dnsTypes[typ]
	if !ok {
		return nil, Invalid("dns", "type %q is not one of A, AAAA, CNAME, MX, TXT, NS", s.Type)
	}
	d := &dnsProbe{name: s.Name, typ: typ, compare: compare, resolver: &net.Resolver{PreferGo: true}}
	switch typ {
	case "":
		d.typ, d.network = "A/AAAA", "ip"
	case "A":
		d.network = "ip4"
	case "AAAA":
		d.network = "ip6"
	}
	for _, e := range s.Expect {
		want, err := d.normalExpect(e)
		if err != nil {
			return nil, Invalid("dns", "%w", err)
		}
		d.expect = append(d.expect, want)
	}
	target := "dns " + d.name + " " + d.typ
	if s.Server != "" {
		server, err := dnsServer(s.Server)
		if err != nil {
			return nil, Invalid("dns", "%w", err)
		}
		d.server = server
		// The resolver still reads resolv.conf for its options and its list of
		// servers; it asks each of those, and each dial comes here.
		d.resolver.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			var dialer net.Dialer
			return dialer.DialContext(ctx, network, server)
		}
		target += " @" + server
	}
	return &Prober{kind: "dns", target: target, measure: d.measure}, nil
}

type dnsProbe struct {
	name, typ string // typ as shown: "A/AAAA" for any address
	compare   int
	network   string   // for an address type: "ip", "ip4" or "ip6"
	expect    []string // in the form answers take, to compare as strings
	server    string   // host:port, or "" for the system's
	resolver  *net.Resolver
}

// normalExpect checks an expected answer and puts it in the form of answers.
func (d *dnsProbe) normalExpect(e string) (string, error) {
	switch d.compare {
	case compareAddr:
		a, err := netip.ParseAddr(e)
		switch {
		case err != nil:
			return "", fmt.Errorf("expected answer %q is not an IP address", e)
		case d.typ == "A" && !a.Unmap().Is4():
			return "", fmt.Errorf("expected answer %q is not an IPv4 address, so never an A record", e)
		case d.typ == "AAAA" && a.Unmap().Is4():
			return "", fmt.Errorf("expected answer %q is not an IPv6 address, so never an AAAA record", e)
		}
		return a.Unmap().String(), nil
	case compareName:
		if !validDomainName(e) {
			return "", fmt.Errorf("expected answer %q is not a domain name", e)
		}
		return normalName(e), nil
	}
	return e, nil
}

func (d *dnsProbe) measure(ctx context.Context) (health.Observation, error) {
	answers, err := d.lookup(ctx)
	if err != nil {
		return health.Observation{}, d.lookupError(err)
	}
	if len(answers) == 0 {
		return health.Observation{Value: 0, Unit: "records"}, errors.New("no records")
	}
	shown := listAnswers(answers)
	obs := health.Observation{Value: len(answers), Unit: "records", Message: d.typ + " " + shown}
	var missing []string
	for _, e := range d.expect {
		if !slices.Contains(answers, e) {
			missing = append(missing, e)
		}
	}
	if len(missing) > 0 {
		return obs, fmt.Errorf("answered %s, not %s", shown, strings.Join(missing, ", "))
	}
	return obs, nil
}

// lookup asks for the records of the probe's type, in the form Expect takes.
func (d *dnsProbe) lookup(ctx context.Context) ([]string, error) {
	var answers []string
	switch d.typ {
	case "A/AAAA", "A", "AAAA":
		addrs, err := d.resolver.LookupNetIP(ctx, d.network, d.name)
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			answers = append(answers, a.Unmap().String())
		}
	case "CNAME":
		cname, err := d.canonicalName(ctx)
		if err != nil {
			return nil, err
		}
		// Go answers the name itself when it has addresses and no alias.
		if c := normalName(cname); c != normalName(d.name) {
			answers = append(answers, c)
		}
	case "MX":
		mxs, err := d.resolver.LookupMX(ctx, d.name)
		if err != nil {
			return nil, err
		}
		for _, mx := range mxs {
			answers = append(answers, normalName(mx.Host))
		}
	case "NS":
		nss, err := d.resolver.LookupNS(ctx, d.name)
		if err != nil {
			return nil, err
		}
		for _, ns := range nss {
			answers = append(answers, normalName(ns.Host))
		}
	case "TXT":
		return d.resolver.LookupTXT(ctx, d.name)
	}
	return answers, nil
}

// maxAliases bounds a chain of CNAME records, against a loop: BIND follows
// 16 at most too.
const maxAliases = 16

// canonicalName follows the aliases of the probe's name to the end of their
// chain. Go's LookupCNAME asks for the addresses and for the CNAME record at
// once and answers from the reply that comes first: the end of the chain
// from the addresses' reply, its first link from the other. So each answer
// is looked up again until it is its own, or has no record left (a CNAME to
// a name without addresses).
func (d *dnsProbe) canonicalName(ctx context.Context) (string, error) {
	name := d.name
	for range maxAliases + 1 {
		next, err := d.resolver.LookupCNAME(ctx, name)
		dnsErr, _ := errors.AsType[*net.DNSError](err)
		switch {
		case err != nil && name != d.name && dnsErr != nil && dnsErr.IsNotFound:
			return name, nil
		case err != nil:
			return "", err
		case normalName(next) == normalName(name):
			return name, nil
		}
		name = next
	}
	return "", fmt.Errorf("more than %d aliases in a row", maxAliases)
}

// lookupError is the resolver's error, naming the server that was asked.
func (d *dnsProbe) lookupError(err error) error {
	if dnsErr, ok := errors.AsType[*net.DNSError](err); ok && d.server != "" {
		// The resolver names the resolv.conf server it meant to ask, or none
		// when the deadline passed; the query went to d.server.
		named := *dnsErr
		named.Server = d.server
		return &named
	}
	return err
}

// listAnswers lists at most maxShown answers, and how many more there are.
func listAnswers(answers []string) string {
	shown := answers
	if len(shown) > maxShown {
		shown = shown[:maxShown]
	}
	quoted := make([]string, len(shown))
	for i, a := range shown {
		quoted[i] = a
		if strings.ContainsAny(a, " \",") || a == "" {
			quoted[i] = strconv.Quote(a) // a TXT record that a list would blur
		}
	}
	s := strings.Join(quoted, ", ")
	if more := len(answers) - len(shown); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// normalName is a host name as answers compare: lower case, no trailing dot.
func normalName(name string) string {
	return strings.ToLower(strings.TrimSuffix(name, "."))
}

// dnsServer checks a server address and adds the default port, 53.
func dnsServer(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil { // no port: an address alone, IPv6 with or without brackets, or a name
		host, port = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), "53"
	}
	if host == "" {
		return "", fmt.Errorf("server %q has no host", s)
	}
	if _, err := netip.ParseAddr(host); err != nil && !validDomainName(host) {
		return "", fmt.Errorf("server %q: %q is neither an IP address nor a host name", s, host)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("server %q: port %q is not a number from 1 to 65535", s, port)
	}
	return net.JoinHostPort(host, port), nil
}

// validDomainName reports whether s can be a DNS name: dot-separated labels
// of 1 to 63 letters, digits, hyphens and underscores (as in SRV and DKIM
// names), at most 253 in all, with an optional trailing dot.
func validDomainName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || strings.IndexFunc(label, notLabelRune) >= 0 {
			return false
		}
	}
	return true
}

func notLabelRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
}

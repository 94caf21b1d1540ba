package kinds

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// DNS is a lookup that must answer, with the answers the block lists.
var DNS = define(Kind{
	Name:          "dns",
	Summary:       "A DNS lookup that answers, optionally with the answers listed.",
	Example:       "{name: localhost}",
	ComponentType: health.ComponentTypeSystem, // the resolver: a system the workload depends on
	CLI:           dnsCLI,
}, block[probe.DNSSpec]{
	fields: func(s *probe.DNSSpec) []config.Field {
		return []config.Field{
			{Key: "name", Value: config.String(&s.Name), Required: true,
				Doc: "Required: the name to look up, with resolv.conf's search domains unless it ends with a dot."},
			{Key: "type", Value: config.String(&s.Type),
				Doc: "The record type: A, AAAA, CNAME, MX, TXT or NS, in any case; by default any address, A or AAAA."},
			{Key: "answers", Value: config.Strings(&s.Expect),
				Doc: "Answers that must all be among the lookup's: addresses, host names (for CNAME the end of the chain), or whole TXT strings; by default any answer passes."},
			{Key: "server", Value: config.String(&s.Server),
				Doc: "HOST[:PORT] of the DNS server to ask (port 53 by default); by default those of /etc/resolv.conf."},
		}
	},
	check: func(d *config.Decoder, n ast.Node, path string, s *probe.DNSSpec, _ config.Given) {
		s.Type = strings.ToUpper(s.Type)
		if _, err := probe.DNS(*s); err != nil {
			d.Errorf(n, path, "%s", probe.WithoutKind(err))
		}
	},
	build: func(_ string, s probe.DNSSpec, _ Env) (health.Checker, error) { return probe.DNS(s) },
})

// recordTypes are the values of --type, for shell completion.
var recordTypes = []string{"A", "AAAA", "CNAME", "MX", "TXT", "NS"}

var dnsCLI = takes(CLI{
	Schemes: []string{"dns"}, Target: "dns://NAME, dns://SERVER/NAME",
	Help: "a name that resolves (--type, --answer)", Example: "dns://localhost",
}, targets[probe.DNSSpec]{
	flags: func(s *probe.DNSSpec) []Flag {
		return []Flag{
			{Name: "type", Value: stringFlag(&s.Type), Choices: recordTypes, Usage: "record type: A, AAAA, CNAME, MX, TXT or NS (default any address)"},
			{Name: "answer", Value: stringsFlag(&s.Expect), Usage: "an answer that must be among the answers (repeatable)"},
		}
	},
	// RFC 4501: dns://[server[:port]/]name[?type=TYPE]
	url: func(target string, s probe.DNSSpec) (*probe.Prober, error) {
		u, err := parseTarget(target)
		if err != nil {
			return nil, err
		}
		s.Name = u.Host
		if p := strings.TrimPrefix(u.Path, "/"); p != "" {
			s.Name, s.Server = p, u.Host
		}
		if q := u.Query().Get("type"); q != "" {
			if s.Type != "" && !strings.EqualFold(s.Type, q) {
				return nil, fmt.Errorf("target %q asks for type %s, --type for %s", target, q, s.Type)
			}
			s.Type = q
		}
		s.Type = strings.ToUpper(s.Type)
		return probe.DNS(s)
	},
})

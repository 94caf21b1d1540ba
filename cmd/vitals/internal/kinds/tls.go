package kinds

import (
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// TLS is a TLS handshake whose certificate must verify and stay valid.
var TLS = define(Kind{
	Name:          "tls",
	Summary:       "A TLS handshake whose certificate verifies, and expires no sooner than min-validity.",
	Example:       "{address: example.com:443}",
	ComponentType: health.ComponentTypeComponent, // the certificate the workload serves, most often
	CLI:           tlsCLI,
}, block[probe.TLSSpec]{
	fields: func(s *probe.TLSSpec) []config.Field {
		return append([]config.Field{
			{Key: "address", Value: config.String(&s.Address), Required: true, Doc: "Required: HOST:PORT, the port a number."},
			{Key: "min-validity", Value: config.Duration(&s.MinValidity), Default: "0s",
				Doc: "Fails the check when the certificate expires sooner, so that it is renewed while there is time; by default only once it has expired."},
		}, tlsFields(&s.TLS)...)
	},
	tls:   func(s *probe.TLSSpec) *probe.TLSOptions { return &s.TLS },
	build: func(_ string, s probe.TLSSpec, _ Env) (health.Checker, error) { return probe.TLS(s) },
})

var tlsCLI = takes(CLI{
	Schemes: []string{"tls"}, Target: "tls://HOST:PORT",
	Help: "a TLS handshake and the certificate's remaining validity", Example: "tls://localhost:443",
}, targets[probe.TLSSpec]{
	flags: func(s *probe.TLSSpec) []Flag {
		return append([]Flag{
			{Name: "min-validity", Value: durationFlag(&s.MinValidity), Usage: "the certificate must stay valid at least this long"},
		}, tlsFlags(&s.TLS)...)
	},
	url: func(target string, s probe.TLSSpec) (*probe.Prober, error) {
		var err error
		if s.Address, err = hostPort(target); err != nil {
			return nil, err
		}
		return probe.TLS(s)
	},
})

package kinds

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/grpchealth"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// GRPC is a grpc.health.v1 Check that must answer SERVING.
var GRPC = define(Kind{
	Name:          "grpc",
	Summary:       "A grpc.health.v1 Check call that answers SERVING.",
	Example:       "{url: grpc://localhost:50051}",
	ComponentType: health.ComponentTypeComponent, // the workload's own gRPC server, most often
	CLI:           grpcCLI,
	Import:        &Import{Kubelet: "grpc", Block: grpcFromPeer},
}, block[grpchealth.GRPCSpec]{
	fields: func(s *grpchealth.GRPCSpec) []config.Field {
		return append([]config.Field{
			{Key: "url", Value: config.String(&s.URL), Required: true,
				Doc: "Required: grpc://HOST:PORT[/SERVICE] in plaintext, or grpcs://… over TLS (with the fields below); without SERVICE, the server as a whole, as in the kubelet."},
		}, tlsFields(&s.TLS)...)
	},
	tls: func(s *grpchealth.GRPCSpec) *probe.TLSOptions { return &s.TLS },
	build: func(_ string, s grpchealth.GRPCSpec, _ Env) (health.Checker, error) {
		if s.URL == "" {
			return nil, errors.New("url is required")
		}
		return grpchealth.GRPC(s)
	},
})

// grpcFromPeer is the block of a peer's grpc.health.v1 check, in plaintext:
// grpc://ADDRESS[/SERVICE], with no path for the server as a whole. A
// service whose name a URL path must escape (a space, a ? or #, a %) is
// written escaped, with its name as given in a note: the kind reads it
// back unescaped.
func grpcFromPeer(p Peer) ([]Pair, error) {
	u := url.URL{Scheme: "grpc", Host: p.Address}
	note := ""
	if p.Service != "" {
		u.Path = "/" + p.Service
		if u.EscapedPath() != u.Path {
			note = fmt.Sprintf("service %q", p.Service)
		}
	}
	if _, err := grpchealth.GRPC(grpchealth.GRPCSpec{URL: u.String()}); err != nil {
		return nil, err
	}
	return []Pair{{Key: "url", Value: u.String(), Note: note}}, nil
}

var grpcCLI = takes(CLI{
	Schemes: []string{"grpc", "grpcs"}, Target: "grpc://HOST:PORT[/SERVICE], grpcs://…",
	Help: "a grpc.health.v1 Check that answers SERVING", Example: "grpc://localhost:50051",
}, targets[grpchealth.GRPCSpec]{
	flags: func(s *grpchealth.GRPCSpec) []Flag { return tlsFlags(&s.TLS) },
	url: func(target string, s grpchealth.GRPCSpec) (*probe.Prober, error) {
		s.URL = target
		return grpchealth.GRPC(s)
	},
})

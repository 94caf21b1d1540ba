package kinds

import (
	"errors"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/grpchealth"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// GRPC is a grpc.health.v1 Check that must answer SERVING.
var GRPC = define(Kind{
	Name:    "grpc",
	Summary: "A grpc.health.v1 Check call that answers SERVING.",
	Example: "{url: grpc://localhost:50051}",
	CLI:     grpcCLI,
}, block[grpchealth.GRPCSpec]{
	fields: func(s *grpchealth.GRPCSpec) []config.Field {
		return append([]config.Field{
			{Key: "url", Value: config.String(&s.URL),
				Doc: "Required: grpc://HOST:PORT[/SERVICE] in plaintext, or grpcs://… over TLS (with the fields below); without SERVICE, the server as a whole, as in the kubelet."},
		}, tlsFields(&s.TLS)...)
	},
	build: func(_ string, s grpchealth.GRPCSpec, _ Env) (health.Checker, error) {
		if s.URL == "" {
			return nil, errors.New("url is required")
		}
		return grpchealth.GRPC(s)
	},
})

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

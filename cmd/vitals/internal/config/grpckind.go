package config

import (
	"errors"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/grpchealth"
	"github.com/vitals-dev/vitals/health"
)

// grpcKind is a grpc.health.v1 Check: {url: grpc://HOST:PORT[/SERVICE]}, or
// grpcs:// with the TLS fields of http and tls.
func grpcKind(d *decoder, n ast.Node, path string) (any, func() (health.Checker, error)) {
	var s grpchealth.GRPCSpec
	if !d.fields(n, path, map[string]field{
		"url":     str(&s.URL),
		"ca-file": cstr(&s.TLS.CAFile), "cert": cstr(&s.TLS.CertFile), "key": cstr(&s.TLS.KeyFile),
		"server-name": str(&s.TLS.ServerName), "insecure": boolean(&s.TLS.InsecureSkipVerify),
	}) {
		return nil, nil
	}
	return s, func() (health.Checker, error) {
		if s.URL == "" {
			return nil, errors.New("url is required")
		}
		return grpchealth.GRPC(s)
	}
}

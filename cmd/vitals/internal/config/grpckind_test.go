package config_test

import (
	"strings"
	"testing"
)

func TestBadGRPCChecksAndGRPCListenSayWhatAndWhere(t *testing.T) {
	_, err := parse(t, y(
		"listen: :8558",
		"grpc-listen: nowhere",
		"checks:",
		"  a: {grpc: {url: \"http://localhost:50051/\"}}",
		"  b: {grpc: {url: \"grpc://localhost:50051\", ca-file: /etc/ca.pem}}",
		"  c: {grpc: {}}",
		"  d: {grpc: {url: \"grpc://localhost:50051\", method: GET}}",
	))
	want := []string{
		`vitals.yaml:2:14: grpc-listen: "nowhere" is not HOST:PORT (or :PORT)`,
		`vitals.yaml:4:13: checks.a.grpc: URL "http://localhost:50051/": scheme must be grpc or grpcs (for TLS)`,
		`vitals.yaml:5:13: checks.b.grpc: URL "grpc://localhost:50051": TLS options need a grpcs URL`,
		`vitals.yaml:6:13: checks.c.grpc: url is required`,
		`vitals.yaml:7:45: checks.d.grpc.method: unknown field "method" (want ca-file, cert, insecure, key, server-name, url)`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("Parse error:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	c, err := parse(t, y(
		"listen: :8558",
		"grpc-listen: 127.0.0.1:8559",
		"checks:",
		"  upstream: {grpc: {url: \"grpcs://api.internal:443/readiness\", server-name: api}}",
	))
	if err != nil {
		t.Fatal(err)
	}
	if c.GRPCListen != "127.0.0.1:8559" || c.Checks[0].Kind != "grpc" {
		t.Fatalf("grpc-listen %q, kind %q", c.GRPCListen, c.Checks[0].Kind)
	}
	if _, err := parse(t, y("listen: :8558", "grpc-listen: :8558", "checks:", "  a: {heartbeat: {ttl: 1s}}")); err == nil ||
		!strings.Contains(err.Error(), `grpc-listen: ":8558" shares a port with listen (":8558"): give each its own port`) {
		t.Fatalf("the same address twice: %v", err)
	}
}

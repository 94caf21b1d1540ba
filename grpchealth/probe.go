package grpchealth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
	"github.com/vitals-dev/vitals/version"
)

// GRPCSpec is a gRPC check: a grpc.health.v1.Health/Check call that must
// answer SERVING.
type GRPCSpec struct {
	// URL is grpc://HOST:PORT/SERVICE in plaintext, or grpcs://… over TLS.
	// The port is a number; an empty host, as in grpc://:50051, is this
	// machine. SERVICE is the service name to ask about; without one, as in
	// grpc://localhost:50051, it is "", the server as a whole, as in the
	// kubelet. Required.
	URL string
	// TLS says how a grpcs server is verified and who the probe is to it:
	// a CA file instead of the system's roots, a client certificate, the
	// server name (default the URL's host), or no verification at all. A
	// grpc:// URL takes none.
	TLS probe.TLSOptions
}

// grpcProbe is one gRPC check, ready to run as often as needed; GRPC gives
// it the one probe shape, a *probe.Prober.
type grpcProbe struct {
	address string // host:port, as dialled
	service string
	creds   credentials.TransportCredentials
}

// GRPC builds a gRPC probe. Each run connects anew, directly (never through
// a proxy from the environment), with User-Agent vitals/<version>, calls
// Check for the service, and closes the connection; the connection and the
// call share the run's one deadline, as in the kubelet's gRPC probe. A
// connection that fails (refused, a TLS handshake that does not verify)
// fails the run at once, with the reason; one that is still being made at
// the deadline fails it then.
//
// Outputs are the kubelet's: "service healthy", and for a failure
// `service unhealthy (responded with "NOT_SERVING")`,
// `timeout: failed to connect service "HOST:PORT" within 1s: context deadline exceeded`,
// `error: failed to connect service at "HOST:PORT": REASON`,
// "error: this server does not implement the grpc health protocol
// (grpc.health.v1.Health): …" (a server without the health service),
// "timeout: health rpc did not complete within 1s", or
// "error: health rpc probe failed: …" (an unknown service's NOT_FOUND among
// them). The observed value is the latency of the connection and the call,
// in milliseconds, whenever the server answered.
func GRPC(s GRPCSpec) (*probe.Prober, error) {
	u, err := url.Parse(s.URL)
	switch {
	case err != nil:
		return nil, invalid("URL %q: %w", s.URL, err)
	case u.Scheme != "grpc" && u.Scheme != "grpcs":
		return nil, invalid("URL %q: scheme must be grpc or grpcs (for TLS)", s.URL)
	case u.Host == "":
		return nil, invalid("URL %q has no host:port", s.URL)
	case u.User != nil:
		return nil, invalid("URL %q: the health protocol has no user or password to give", s.URL)
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s.URL, "?") || strings.HasSuffix(s.URL, "#"):
		return nil, invalid("URL %q: the service is the path; a ? or # in it must be written %%3F or %%23", s.URL)
	case u.Scheme == "grpc" && s.TLS != (probe.TLSOptions{}):
		return nil, invalid("URL %q: TLS options need a grpcs URL", s.URL)
	}
	if n, err := strconv.Atoi(u.Port()); err != nil || n < 1 || n > 65535 {
		return nil, invalid("URL %q: port %q is not a number from 1 to 65535", s.URL, u.Port())
	}
	p := &grpcProbe{address: u.Host, service: strings.TrimPrefix(u.Path, "/"),
		creds: insecure.NewCredentials()}
	if u.Scheme == "grpcs" {
		config, err := s.TLS.Config()
		if err != nil {
			return nil, invalid("%w", err)
		}
		if config.ServerName == "" {
			config.ServerName = u.Hostname()
		}
		if config.ServerName == "" && !config.InsecureSkipVerify {
			return nil, invalid("URL %q has no host to verify the certificate against: set a server name", s.URL)
		}
		p.creds = credentials.NewTLS(config)
	}
	return probe.New("grpc", "grpc "+s.URL, p.measure, nil), nil
}

// invalid is the error of a spec that cannot be built, a *probe.SpecError
// as every kind's is.
func invalid(format string, args ...any) error { return probe.Invalid("grpc", format, args...) }

// measure runs the probe once and reports the latency and what is wrong.
func (p *grpcProbe) measure(ctx context.Context) (health.Observation, error) {
	start := time.Now()
	// within is the run's timeout, for the outputs that say it ran out.
	within := func() time.Duration {
		if d, ok := ctx.Deadline(); ok {
			return d.Sub(start).Round(time.Millisecond)
		}
		return time.Since(start).Round(time.Millisecond)
	}
	conn, err := grpc.NewClient("passthrough:///"+p.address,
		grpc.WithTransportCredentials(p.creds),
		grpc.WithUserAgent("vitals/"+version.Version),
		grpc.WithNoProxy())
	if err != nil {
		return health.Observation{}, fmt.Errorf("error: failed to connect service at %q: %w", p.address, err)
	}
	defer conn.Close()
	connected, err := connect(ctx, conn)
	if errors.Is(err, context.DeadlineExceeded) {
		return health.Observation{}, fmt.Errorf("timeout: failed to connect service %q within %v: %w", p.address, within(), err)
	} else if err != nil {
		return health.Observation{}, fmt.Errorf("error: failed to connect service at %q: %w", p.address, err)
	}
	res, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: p.service})
	took := time.Since(start)
	if err != nil {
		st := status.Convert(err)
		switch {
		case !connected && st.Code() == codes.DeadlineExceeded:
			return health.Observation{}, fmt.Errorf("timeout: failed to connect service %q within %v: %w", p.address, within(), context.DeadlineExceeded)
		case !connected:
			return health.Observation{}, fmt.Errorf("error: failed to connect service at %q: %s", p.address, st.Message())
		case st.Code() == codes.Unimplemented:
			return health.Observation{}, fmt.Errorf("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", st.Message())
		case st.Code() == codes.DeadlineExceeded:
			return health.Observation{}, fmt.Errorf("timeout: health rpc did not complete within %v", within())
		}
		return health.Observation{}, fmt.Errorf("error: health rpc probe failed: %w", err)
	}
	obs := health.Observation{Value: float64(took.Microseconds()) / 1000, Unit: "ms"}
	if st := res.GetStatus(); st != healthpb.HealthCheckResponse_SERVING {
		return obs, fmt.Errorf("service unhealthy (responded with %q)", st.String())
	}
	obs.Message = "service healthy"
	return obs, nil
}

// connect makes conn connect and waits until it is ready (true), or its
// first attempt has failed (false: a call then fails at once, saying why),
// or ctx ends (the error).
func connect(ctx context.Context, conn *grpc.ClientConn) (bool, error) {
	conn.Connect()
	for {
		switch s := conn.GetState(); s {
		case connectivity.Ready:
			return true, nil
		case connectivity.TransientFailure:
			return false, nil
		default:
			if !conn.WaitForStateChange(ctx, s) {
				return false, ctx.Err()
			}
		}
	}
}

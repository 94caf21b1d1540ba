package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math"
	"net"
	"strconv"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// TLSSpec is a TLS check: a handshake that must verify, with a server
// certificate that is not about to expire.
type TLSSpec struct {
	// Address is host:port, such as "api.example.com:443"; the port is a
	// number. Required.
	Address string
	// MinValidity fails the check when the server's certificate expires
	// sooner than this, such as 7*24*time.Hour, so that it is renewed while
	// there is time. Default 0: the check fails only once it has expired.
	MinValidity time.Duration
	// TLS says how the server is verified; its ServerName defaults to the
	// host of Address.
	TLS TLSOptions
}

// TLS builds a TLS probe: it connects, completes a TLS handshake, verifying
// the server's certificate unless told not to, and checks how long the
// certificate (the leaf, the server's own) stays valid. It sends nothing
// after the handshake.
//
// A failure says why: Go's error for a connection or a handshake that
// failed (an unknown authority, a wrong name), and the certificate's name
// and expiry for one that has expired or expires within MinValidity. The
// observed value is the days the certificate has left, to two decimals.
func TLS(s TLSSpec) (*Prober, error) {
	host, err := hostPort("tls", s.Address)
	if err != nil {
		return nil, err
	}
	if s.MinValidity < 0 {
		return nil, invalid("tls", "min validity %v is negative", s.MinValidity)
	}
	config, err := s.TLS.config()
	if err != nil {
		return nil, invalid("tls", "%v", err)
	}
	if config.ServerName == "" {
		config.ServerName = host
	}
	if config.ServerName == "" && !config.InsecureSkipVerify {
		return nil, invalid("tls", "address %q has no host to verify the certificate against: set a server name", s.Address)
	}
	t := &tlsProbe{address: s.Address, minValidity: s.MinValidity, config: config}
	return &Prober{kind: "tls", target: "tls " + s.Address, measure: t.measure}, nil
}

type tlsProbe struct {
	address     string
	minValidity time.Duration
	config      *tls.Config
}

func (t *tlsProbe) measure(ctx context.Context) (health.Observation, error) {
	raw, err := (&net.Dialer{}).DialContext(ctx, "tcp", t.address)
	if err != nil {
		return health.Observation{}, err
	}
	conn := tls.Client(raw, t.config)
	defer conn.Close()
	// HandshakeContext closes the connection when ctx ends, and then
	// reports ctx's error.
	if err := conn.HandshakeContext(ctx); err != nil {
		return health.Observation{}, fmt.Errorf("TLS handshake with %s: %w", t.address, err)
	}
	leaf := conn.ConnectionState().PeerCertificates[0]
	left := time.Until(leaf.NotAfter)
	obs := health.Observation{Value: roundDays(left), Unit: "days"}
	name, until := certName(leaf), leaf.NotAfter.UTC().Format(time.RFC3339)
	switch {
	case left <= 0:
		return obs, fmt.Errorf("certificate for %q expired %s ago (%s)", name, days(-left), until)
	case left <= t.minValidity:
		return obs, fmt.Errorf("certificate for %q expires in %s (%s), less than the minimum of %s",
			name, days(left), until, days(t.minValidity))
	}
	obs.Message = fmt.Sprintf("certificate for %q valid until %s (%s)", name, until, days(left))
	return obs, nil
}

// certName is the name people know a certificate by: its common name, or
// else its first DNS name or IP address.
func certName(c *x509.Certificate) string {
	switch {
	case c.Subject.CommonName != "":
		return c.Subject.CommonName
	case len(c.DNSNames) > 0:
		return c.DNSNames[0]
	case len(c.IPAddresses) > 0:
		return c.IPAddresses[0].String()
	}
	return c.Subject.String()
}

// roundDays is d in days, to two decimals: a quarter of an hour, finer than
// anyone renews a certificate by.
func roundDays(d time.Duration) float64 {
	return math.Round(d.Hours()/24*100) / 100
}

// days writes d as "3.2 days" or "1 day".
func days(d time.Duration) string {
	n := roundDays(d)
	if n == 1 {
		return "1 day"
	}
	return strconv.FormatFloat(n, 'f', -1, 64) + " days"
}

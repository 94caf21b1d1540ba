package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
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
// after the handshake. When the server asks for a client certificate, the
// probe waits up to 50ms after a TLS 1.3 handshake for the server to refuse
// it: under TLS 1.3 the client's handshake ends before the server has
// checked the client's certificate.
//
// A failure says why: Go's error for a connection or a handshake that
// failed (an unknown authority, a wrong name), the server's alert for a
// client certificate it refused, and the certificate's name and expiry for
// one that has expired or expires within MinValidity. The observed value is
// the days the certificate has left, to two decimals, negative once it has
// expired; it is there whenever the server sent a certificate, even one that
// failed verification.
func TLS(s TLSSpec) (*Prober, error) {
	host, err := hostPort("tls", s.Address)
	if err != nil {
		return nil, err
	}
	if s.MinValidity < 0 {
		return nil, Invalid("tls", "min validity %v is negative", s.MinValidity)
	}
	config, err := s.TLS.Config()
	if err != nil {
		return nil, Invalid("tls", "%w", err)
	}
	if config.ServerName == "" {
		config.ServerName = host
	}
	if config.ServerName == "" && !config.InsecureSkipVerify {
		return nil, Invalid("tls", "address %q has no host to verify the certificate against: set a server name", s.Address)
	}
	t := &tlsProbe{address: s.Address, minValidity: s.MinValidity, config: config}
	return &Prober{kind: "tls", target: "tls " + s.Address, measure: t.measure}, nil
}

// refusalWait bounds how long the probe waits, after a TLS 1.3 handshake in
// which the server asked for a client certificate, for the server's alert
// that it refused the certificate. A server sends it as soon as it has read
// the client's last handshake message: a round trip on the networks that
// health checks cross.
const refusalWait = 50 * time.Millisecond

type tlsProbe struct {
	address     string
	minValidity time.Duration
	config      *tls.Config // as the spec asks: shared by every run, never changed
}

func (t *tlsProbe) measure(ctx context.Context) (health.Observation, error) {
	raw, err := (&net.Dialer{}).DialContext(ctx, "tcp", t.address)
	if err != nil {
		return health.Observation{}, err
	}
	var (
		leaf      *x509.Certificate // the server's certificate, once seen
		requested bool              // whether the server asked for a client certificate
	)
	config := t.config.Clone()
	// Go's own verification ends the handshake before the certificate can be
	// kept: the probe verifies it here instead, as Go would, so that an
	// expired or untrusted certificate still says how long it has left.
	config.InsecureSkipVerify = true
	config.VerifyConnection = func(cs tls.ConnectionState) error {
		leaf = cs.PeerCertificates[0]
		if t.config.InsecureSkipVerify {
			return nil
		}
		return verifyChain(cs.PeerCertificates, t.config.RootCAs, t.config.ServerName)
	}
	config.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		requested = true
		if len(t.config.Certificates) > 0 {
			return &t.config.Certificates[0], nil
		}
		return &tls.Certificate{}, nil // none: the server decides whether that will do
	}
	conn := tls.Client(raw, config)
	defer conn.Close()
	// HandshakeContext closes the connection when ctx ends, and then
	// reports ctx's error. It calls the callbacks above on this goroutine.
	err = conn.HandshakeContext(ctx)
	if leaf == nil { // it failed before the server's certificate came
		return health.Observation{}, fmt.Errorf("TLS handshake: %w", err)
	}
	left := time.Until(leaf.NotAfter)
	obs := health.Observation{Value: roundDays(left), Unit: "days"}
	if err != nil {
		return obs, fmt.Errorf("TLS handshake: %w", err)
	}
	if requested && conn.ConnectionState().Version >= tls.VersionTLS13 {
		if err := refusal(ctx, conn); err != nil {
			return obs, err
		}
	}
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

// verifyChain verifies a server's chain, leaf first, as Go's handshake does:
// against roots (nil for the system's), for name, and failing with the error
// Go's handshake fails with.
func verifyChain(certs []*x509.Certificate, roots *x509.CertPool, name string) error {
	opts := x509.VerifyOptions{Roots: roots, DNSName: name, Intermediates: x509.NewCertPool()}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := certs[0].Verify(opts); err != nil {
		return &tls.CertificateVerificationError{UnverifiedCertificates: certs, Err: err}
	}
	return nil
}

// refusal reads from conn for refusalWait, or until ctx's deadline if that
// comes first, and reports the alert of a server that refused the client's
// certificate. Anything else (silence, data, the end of the connection)
// means the server accepted it.
func refusal(ctx context.Context, conn *tls.Conn) error {
	wait := refusalWait
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d))
	}
	if err := conn.SetReadDeadline(time.Now().Add(wait)); err != nil {
		return err
	}
	_, err := conn.Read(make([]byte, 1))
	if opErr, ok := errors.AsType[*net.OpError](err); ok && opErr.Op == "remote error" {
		return fmt.Errorf("the server refused the client certificate: %w", err)
	}
	return nil
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

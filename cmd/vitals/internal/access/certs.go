package access

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
)

// CertOptions name the files of a listener's TLS.
type CertOptions struct {
	// CertFile and KeyFile are the PEM certificate, its chain after it, and
	// its key. Both are required.
	CertFile, KeyFile string
	// ClientCAFile holds the PEM certificates of the authorities whose
	// client certificates authorise a client. Default "": no client
	// certificate is asked for.
	ClientCAFile string
	// Logger says when a file changes, and when it does not load. Default
	// slog.Default().
	Logger *slog.Logger
}

// Certs is a listener's TLS, its files read again when they change (each
// handshake stats them), so that the certificate cert-manager renews is the
// one served from the next connection on, with no restart.
type Certs struct {
	pair *watched[*tls.Certificate]
	cas  *watched[*x509.CertPool] // nil: no client certificate asked for
}

// NewCerts reads the files of o: an error when they do not load.
func NewCerts(o CertOptions) (*Certs, error) {
	pair, err := watch([]string{o.CertFile, o.KeyFile}, loadPair, "TLS certificate", o.Logger)
	if err != nil {
		return nil, err
	}
	c := &Certs{pair: pair}
	if o.ClientCAFile != "" {
		if c.cas, err = watch([]string{o.ClientCAFile}, loadPool, "client CA file", o.Logger); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Config is the listener's tls.Config: TLS 1.2 at least, HTTP/1.1 (each
// connection one request at a time, as the listener's cap counts them), the
// certificate as its files are now, and, with a ClientCAFile, a client
// certificate asked for and verified when given, never required: the kubelet
// and the load balancers send none, and are answered as any client off
// loopback.
func (c *Certs) Config() *tls.Config {
	cfg := c.base()
	if c.cas != nil {
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
		cfg.GetConfigForClient = c.ForClient // the authorities as their file is now
	}
	return cfg
}

// ForClient is the tls.Config of one handshake, Config's with the client
// authorities as their file is now: for a listener whose Certs change
// (vitals reload of tls:), which asks the Certs of the moment through its
// own GetConfigForClient.
func (c *Certs) ForClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	cfg := c.base()
	if c.cas != nil {
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
		cfg.ClientCAs = c.cas.current()
	}
	return cfg, nil
}

func (c *Certs) base() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return c.pair.current(), nil
		},
	}
}

func loadPair(files []string) (*tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(files[0], files[1])
	if err != nil {
		return nil, fmt.Errorf("load the certificate %s with key %s: %w", files[0], files[1], err)
	}
	return &pair, nil
}

func loadPool(files []string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(files[0])
	if err != nil {
		return nil, fmt.Errorf("read the client CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("client CA file %s holds no PEM certificate", files[0])
	}
	return pool, nil
}

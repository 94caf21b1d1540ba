package probe

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// TLSOptions say how the http and tls kinds verify a server, and who they are
// to it. The zero value verifies the server against the system's roots and
// the name in the target, as a browser would.
type TLSOptions struct {
	// CAFile is a PEM bundle of the roots to verify the server with, instead
	// of the system's. Read when the probe is built.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and its key, for
	// servers that ask for one. Both or neither.
	CertFile, KeyFile string
	// ServerName is the name to verify the certificate against and to send as
	// SNI; default the target's host (for the http kind, that of a Host
	// header if there is one).
	ServerName string
	// InsecureSkipVerify accepts any certificate. The kubelet's HTTPS probes
	// do this; vitals verifies unless told not to.
	InsecureSkipVerify bool
}

// Validate says what is wrong with the options wherever they are used: a
// client certificate without its key, or a key without its certificate. It
// reads no file; Config does.
func (o TLSOptions) Validate() error {
	if (o.CertFile == "") != (o.KeyFile == "") {
		return fmt.Errorf("client certificate needs both a certificate file and a key file (got %q and %q)", o.CertFile, o.KeyFile)
	}
	return nil
}

// WithoutFiles is o with no file to read (no CAFile, CertFile or KeyFile):
// what can be built of it on a machine that does not have them, to check
// the rest.
func (o TLSOptions) WithoutFiles() TLSOptions {
	o.CAFile, o.CertFile, o.KeyFile = "", "", ""
	return o
}

// isZero reports whether no option is set.
func (o TLSOptions) isZero() bool { return o == TLSOptions{} }

// Config builds the tls.Config of the options (TLS 1.2 at least), reading
// the files now, so that a missing or bad one fails when the probe is built
// rather than at its first run. Kinds outside this package (gRPC) use it too.
func (o TLSOptions) Config() (*tls.Config, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	c := &tls.Config{ServerName: o.ServerName, InsecureSkipVerify: o.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s: no PEM certificate in it", o.CAFile)
		}
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

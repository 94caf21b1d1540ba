package probetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority made for one test, valid for 1000 days, and
// the PEM file of its certificate (for a CA file option).
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	File string
}

// NewCA makes a CA, its file in the test's temporary directory.
func NewCA(tb testing.TB) CA {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "vitals test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(1000 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	file := filepath.Join(tb.TempDir(), "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		tb.Fatal(err)
	}
	return CA{Cert: cert, Key: key, File: file}
}

// Server makes a server certificate for localhost and 127.0.0.1 that
// expires validFor from now (in the past, when negative).
func (ca CA) Server(tb testing.TB, validFor time.Duration) tls.Certificate {
	tb.Helper()
	return ca.ServerFor(tb, validFor, "localhost", "127.0.0.1")
}

// ServerFor makes a server certificate for hosts, each a name or an IP
// address, that expires validFor from now (in the past, when negative). Its
// serial number is random: two are told apart by it.
func (ca CA) ServerFor(tb testing.TB, validFor time.Duration, hosts ...string) tls.Certificate {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		tb.Fatal(err)
	}
	notAfter := time.Now().Add(validFor)
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: hosts[0]},
		NotBefore: notAfter.Add(-800 * 24 * time.Hour), NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		tb.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// WriteKeyPair writes cert and its key as PEM to certFile and keyFile, as a
// server reads them (tls.LoadX509KeyPair).
func WriteKeyPair(tb testing.TB, cert tls.Certificate, certFile, keyFile string) {
	tb.Helper()
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		tb.Fatal(err)
	}
	writePEM(tb, certFile, &pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	writePEM(tb, keyFile, &pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

func writePEM(tb testing.TB, file string, block *pem.Block) {
	tb.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// Client writes a client certificate for "vitals-probe", valid for an hour,
// and its key, and returns their files.
func (ca CA) Client(tb testing.TB) (certFile, keyFile string) {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "vitals-probe"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		tb.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	certFile, keyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	writePEM(tb, certFile, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	writePEM(tb, keyFile, &pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	return certFile, keyFile
}

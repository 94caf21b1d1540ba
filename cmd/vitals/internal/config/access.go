package config

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/yamlnode"
)

// Details says who is shown why checks fail on the listener of the probe
// endpoints (details:), and so who may read the status page, its JSON and
// its event stream.
type Details string

const (
	// DetailsAll shows every client the reasons, the status page, its JSON
	// and its events: what a pod's network offers to every other pod.
	DetailsAll Details = "all"
	// DetailsLocal, the default, shows them to the clients on loopback (in
	// the pod: kubectl port-forward, an exec into it, a sidecar) and to those
	// that give the auth: token or a client certificate of tls.client-ca-file;
	// the others get the probes' status codes and the checks' names, each
	// reason "reason withheld", and no page, as the kube-apiserver answers
	// whoever may not see more.
	DetailsLocal Details = "local"
	// DetailsNone withholds the reasons from every client, those on loopback
	// too; the status page, without outputs, is shown to those whom local
	// would show it.
	DetailsNone Details = "none"
)

// DefaultDetails is details:'s default: nothing leaves the pod but the
// probes' verdicts unless the file says so.
const DefaultDetails = DetailsLocal

// TLS is the tls: block: the probe listener serves HTTPS with the
// certificate of CertFile and KeyFile, read again when they change (as
// cert-manager rotates them), and takes the client certificates that
// ClientCAFile's authorities signed as proof of who a client is.
type TLS struct {
	// CertFile and KeyFile are the PEM certificate (its chain after it) and
	// its key. Both are required.
	CertFile, KeyFile string
	// ClientCAFile holds the PEM certificates of the authorities whose
	// client certificates make a client one that sees what a client on
	// loopback sees. Default "": client certificates are not asked for.
	ClientCAFile string
}

// Auth is the auth: block: how a client off loopback proves that it may see
// what one on loopback sees.
type Auth struct {
	// TokenFile holds the bearer token (Authorization: Bearer TOKEN) that
	// does it, read again when it changes. Default "": no token does.
	TokenFile string
}

// detailsValue reads details:: all, local or none, or true (all) and false
// (none), the words of the files written before the three.
func detailsValue(dst *Details) Value {
	words := []string{string(DetailsAll), string(DetailsLocal), string(DetailsNone)}
	return Value{"all, local or none", func(d *Decoder, n ast.Node, path string) {
		if b, ok := yamlnode.Unwrap(n).(*ast.BoolNode); ok {
			*dst = detailsOfBool(b.Value)
			return
		}
		s, ok := d.scalar(n, path)
		switch {
		case !ok:
		case s == "true" || s == "false":
			*dst = detailsOfBool(s == "true")
		case s == string(DetailsAll) || s == string(DetailsLocal) || s == string(DetailsNone):
			*dst = Details(s)
		default:
			d.Errorf(n, path, "want all, local or none (true is all, false none), got %q", s)
		}
	}, expandable(Schema{"enum": append(words, "true", "false")}, Schema{"type": "boolean"})}
}

// detailsOfBool is what true and false meant before local: every client
// shown the reasons, or none.
func detailsOfBool(shown bool) Details {
	if shown {
		return DetailsAll
	}
	return DetailsNone
}

// tlsFields are the fields of the tls: block, read into t.
func tlsFields(t *TLS) []Field {
	return []Field{
		{Key: "cert-file", Value: CString(&t.CertFile), Required: true,
			Doc: "Required: the listener's certificate, PEM, its chain after it: for the pod's name or address. Read again when it changes (cert-manager's rotation); a pair that does not load (a rotation caught halfway) keeps the last good one."},
		{Key: "key-file", Value: CString(&t.KeyFile), Required: true,
			Doc: "Required: the certificate's private key, PEM."},
		{Key: "client-ca-file", Value: CString(&t.ClientCAFile),
			Doc: "PEM certificates of the authorities whose client certificates let a client off loopback see what one on loopback sees (details: local). Read again when it changes. By default no client certificate is asked for; with it, one is asked for, never required (the kubelet sends none)."},
	}
}

// authFields are the fields of the auth: block, read into a.
func authFields(a *Auth) []Field {
	return []Field{
		{Key: "token-file", Value: CString(&a.TokenFile), Required: true,
			Doc: "Required: a file holding the bearer token (Authorization: Bearer TOKEN) that lets a client off loopback see what one on loopback sees (details: local): reasons, the status page, its JSON and events. Read again when it changes. Send it over tls: only, as any token."},
	}
}

// tlsBlock reads the tls: block and, unless offline, loads its files as the
// listener will, so that a file that validates serves.
func (d *Decoder) tlsBlock(n ast.Node, path string) *TLS {
	t := &TLS{}
	mark := d.Failures()
	given, ok := d.Fields(n, path, tlsFields(t))
	if !ok {
		return nil
	}
	switch {
	case given["cert-file"] == nil && given["key-file"] == nil:
		d.Errorf(n, path, "give cert-file and key-file, the listener's certificate and its key")
	case given["cert-file"] == nil:
		d.Errorf(given["key-file"], path+".key-file", "a key without its certificate: give cert-file too")
	case given["key-file"] == nil:
		d.Errorf(given["cert-file"], path+".cert-file", "a certificate without its key: give key-file too")
	}
	if d.Failures() > mark || d.Offline() {
		return t
	}
	if _, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile); err != nil {
		d.Errorf(given["cert-file"], path+".cert-file", "%s with key-file %s: %v", t.CertFile, t.KeyFile, err)
	}
	if t.ClientCAFile != "" {
		if pem, err := os.ReadFile(t.ClientCAFile); err != nil {
			d.Errorf(given["client-ca-file"], path+".client-ca-file", "%v", err)
		} else if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			d.Errorf(given["client-ca-file"], path+".client-ca-file", "%s holds no PEM certificate", t.ClientCAFile)
		}
	}
	return t
}

// authBlock reads the auth: block and, unless offline, its token.
func (d *Decoder) authBlock(n ast.Node, path string) Auth {
	var a Auth
	mark := d.Failures()
	given, ok := d.Fields(n, path, authFields(&a))
	switch {
	case !ok || d.Failures() > mark:
	case given["token-file"] == nil:
		d.Errorf(n, path, "give token-file, the file of the bearer token")
	case !d.Offline():
		d.tokenFile(given["token-file"], path+".token-file", a.TokenFile)
	}
	return a
}

// tokenFile checks that the file at path holds a token: it can be read, and
// is not empty, which would let anyone in.
func (d *Decoder) tokenFile(n ast.Node, path, file string) {
	if token, err := os.ReadFile(file); err != nil {
		d.Errorf(n, path, "%v", err)
	} else if strings.TrimSpace(string(token)) == "" {
		d.Errorf(n, path, "%s is empty", file)
	}
}

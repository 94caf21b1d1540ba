// Package access decides who sees what on the listener of the probe
// endpoints, which every pod of a cluster can reach: Decide, a pure
// function of the file's choice (Reach) and of what a client is (on
// loopback, authorised), says whether the client is told the reasons and
// whether it may read the status page. A Guard applies it to requests: a
// client is local when its connection comes from loopback (127.0.0.0/8, ::1:
// in a pod, kubectl port-forward, an exec into it, a sidecar), authorised when
// it gives the token of a file (Authorization: Bearer) or a client
// certificate that the TLS configuration verified. Certs serves the
// listener's certificate and trusts the client authorities of files that
// it reads again when they change, as cert-manager rotates them.
//
// The agent translates the file's details:, tls: and auth: into Options
// and wraps its listener and handlers; this package imports nothing of
// the agent, nor config.
package access

import (
	"cmp"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
)

// Reach is to whom the reasons are shown (the file's details:).
type Reach int

const (
	// Local shows the reasons and the page to the clients on loopback and
	// to those authorised; every other client gets the probes' codes and
	// the checks' names with "reason withheld", and no page.
	Local Reach = iota
	// Everyone shows everything to every client.
	Everyone
	// NoOne withholds the reasons from every client; the page, without
	// outputs, is for those whom Local would show it.
	NoOne
)

// Seen is what one client is shown.
type Seen struct {
	// Reasons: why checks fail and their observed values, on the probe
	// endpoints.
	Reasons bool
	// Page: the status page, its JSON and its event stream.
	Page bool
}

// Decide is what a client is shown under reach: local says its connection
// comes from loopback, authorised that it gave the token or a verified
// client certificate.
func Decide(reach Reach, local, authorised bool) Seen {
	trusted := local || authorised
	switch reach {
	case Everyone:
		return Seen{Reasons: true, Page: true}
	case NoOne:
		return Seen{Reasons: false, Page: trusted}
	default:
		return Seen{Reasons: trusted, Page: trusted}
	}
}

// Options configure a Guard.
type Options struct {
	// Reach is to whom the reasons are shown. Default Local.
	Reach Reach
	// TokenFile holds the bearer token that authorises a client, read
	// again when it changes. Default "": no token authorises.
	TokenFile string
	// Logger says when the token file cannot be read again. Default
	// slog.Default().
	Logger *slog.Logger
	// Where is what a client refused the page is told to look at for who
	// may read it. Default "details: in vitals.yaml", the agent's.
	Where string
}

// Guard applies Decide to requests.
type Guard struct {
	reach Reach
	where string
	token *watched[string] // nil: no token file
}

// NewGuard returns the Guard of o, having read its token file: an error
// when it cannot be read or is empty.
func NewGuard(o Options) (*Guard, error) {
	g := &Guard{reach: o.Reach, where: cmp.Or(o.Where, "details: in vitals.yaml")}
	if o.TokenFile != "" {
		w, err := watch([]string{o.TokenFile}, readToken, "token", o.Logger)
		if err != nil {
			return nil, err
		}
		g.token = w
	}
	return g, nil
}

// Seen is what r's client is shown.
func (g *Guard) Seen(r *http.Request) Seen {
	if g.reach == Everyone { // nothing to look at
		return Seen{Reasons: true, Page: true}
	}
	local := Loopback(r.RemoteAddr)
	return Decide(g.reach, local, !local && g.authorised(r))
}

// Reasons says whether r is told why checks fail: for
// health.Monitor.HandlerWithDetails.
func (g *Guard) Reasons(r *http.Request) bool { return g.Seen(r).Reasons }

// Page is page for the clients that may read it; the others are answered
// 401 when a token would let them in (with WWW-Authenticate: Bearer), 403
// otherwise, saying how to reach it.
func (g *Guard) Page(page http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.Seen(r).Page {
			page.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		if g.token != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="vitals"`)
			http.Error(w, "the status page needs the token (Authorization: Bearer), a client certificate, or a client on the pod's loopback (kubectl port-forward)", http.StatusUnauthorized)
			return
		}
		http.Error(w, "the page is shown on loopback only (kubectl port-forward), or to a client certificate: see "+g.where, http.StatusForbidden)
	})
}

// authorised says whether r gave a client certificate that the listener
// verified, or the token.
func (g *Guard) authorised(r *http.Request) bool {
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
		return true
	}
	if g.token == nil {
		return false
	}
	given, ok := bearer(r.Header.Get("Authorization"))
	if !ok {
		return false
	}
	token := g.token.current()
	return subtle.ConstantTimeCompare([]byte(given), []byte(token)) == 1
}

// bearer is the token of an Authorization header of the Bearer scheme,
// whose name is case-insensitive (RFC 9110, section 11.1).
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// Loopback says whether a remote address (http.Request.RemoteAddr,
// HOST:PORT) is on loopback: 127.0.0.0/8 or ::1, an IPv4 one written as
// IPv6 (::ffff:127.0.0.1) too. In a pod, kubectl port-forward connects
// from the pod's own loopback, and so does whatever runs in the pod.
func Loopback(remoteAddr string) bool {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return false
	}
	return ap.Addr().Unmap().IsLoopback()
}

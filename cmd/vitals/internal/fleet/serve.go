package fleet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/access"
)

// DefaultListen is where vitals fleet serves its page: loopback, beside the
// agent's :8558, so that nothing off this machine reads the fleet unless
// the flags say so.
const DefaultListen = "127.0.0.1:8559"

// ServeOptions say how the page is served: with the agent's posture.
type ServeOptions struct {
	// Listen is the address. Default DefaultListen.
	Listen string
	// Reach is who may read the page (the agent's details:): Local, the
	// clients on loopback and those authorised; Everyone; NoOne, as Local,
	// and the Events' messages withheld (Options.Withhold). Default Local.
	Reach access.Reach
	// TokenFile holds a bearer token that authorises a client off
	// loopback. Default "": none does.
	TokenFile string
	// TLS serves HTTPS with these files, read again when they change.
	// Default nil: plain HTTP.
	TLS *access.CertOptions
	// Serving is told the address once the listener is bound.
	Serving func(addr string)
	// Logger says what goes wrong. Default slog.Default().
	Logger *slog.Logger
}

// probed is page with /livez and /readyz beside it, for the kubelet's
// probes, answered to every client as the agent's probe endpoints are:
// they say nothing of the pods. /livez passes while the server answers;
// /readyz once the pods and their Events are listed.
func (f *Fleet) probed(page http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/livez":
		case "/readyz":
			if !f.Synced() {
				http.Error(w, "the pods and their Events are not listed yet", http.StatusServiceUnavailable)
				return
			}
		default:
			page.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintln(w, "ok")
	})
}

// shutdownGrace is how long the requests in flight get when the fleet's
// server stops: its streams are ended at once, and a view takes a moment.
const shutdownGrace = 2 * time.Second

// Serve serves the page over f until ctx ends.
func (f *Fleet) Serve(ctx context.Context, o ServeOptions) error {
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	guard, err := access.NewGuard(access.Options{Reach: o.Reach, TokenFile: o.TokenFile, Logger: o.Logger,
		Where: "vitals fleet's --details, --token-file and --client-ca"})
	if err != nil {
		return fmt.Errorf("--token-file: %w", err)
	}
	var tlsConfig *tls.Config
	if o.TLS != nil {
		certs, err := access.NewCerts(*o.TLS)
		if err != nil {
			return fmt.Errorf("--tls-cert: %w", err)
		}
		tlsConfig = certs.Config()
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", o.Listen, err)
	}
	addr := ln.Addr().String()
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	// The streams end with the server's base context, which Shutdown does
	// not end by itself.
	base, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv := &http.Server{Handler: f.probed(guard.Page(f.Handler())), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return base }}
	if o.Serving != nil {
		o.Serving(addr)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("--listen %s: %w", addr, err)
	case <-ctx.Done():
	}
	endStreams()
	stop, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(stop); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("stop the server on %s: %w", addr, err)
	}
	return nil
}

package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/access"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/api"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/servers"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/ui"
	"github.com/vitals-dev/vitals/grpchealth"
)

// shutdownTimeout bounds how long the probe server, and then the API,
// wait for answers in flight when vitals stops: they are short, and the
// kubelet will not wait.
const shutdownTimeout = 5 * time.Second

// grpcGrace bounds the graceful stop of the gRPC health server.
const grpcGrace = time.Second

// pageStreamShare is the share of the probe listener's connections that the
// status page's event streams may hold at once (a quarter): pages left open
// never take the places the kubelet's probes need.
const pageStreamShare = 4

func (r *run) serveProbes() error {
	// Each request is answered by the front of the moment, which a
	// reload may swap.
	r.probeSrv = servers.Probe(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.front.Load().handler.ServeHTTP(w, req)
	}), r.probeLn, r.errorLog())
	var ln net.Listener = r.probeLn
	if r.front.Load().certs != nil {
		// Each handshake takes the certificates of the front of the
		// moment: a reload may name other files.
		ln = tls.NewListener(r.probeLn, &tls.Config{GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			return r.front.Load().certs.ForClient(hello)
		}})
	}
	// The status page's event streams end with streams, so that they do
	// not hold up the server's shutdown.
	streams, endStreams := context.WithCancel(context.Background())
	r.probeSrv.BaseContext = func(net.Listener) context.Context { return streams }
	r.endPageStreams = endStreams
	go func() {
		err := r.probeSrv.Serve(ln)
		r.failed <- &RunError{fmt.Errorf("vitals run: the probe server stopped: %w", err)}
	}()
	return nil
}

func (r *run) stopProbes(*stopping) {
	if r.probeSrv == nil {
		r.probeLn.Close()
		return
	}
	r.endPageStreams()
	r.shutdown(r.probeSrv, "probe server")
}

// front is what the probe listener serves as the file says now: who sees
// what, its TLS, and the probe endpoints, /metrics and the status page
// over them. A reload of details:, ui:, auth:, tls: or service-info: makes
// a new front and swaps it whole: each request is answered by one front or
// the other, never a mix of the two.
type front struct {
	guard   *access.Guard
	certs   *access.Certs // nil without tls:
	handler http.Handler  // probeHandler's, once the listener is bound
}

// newFront reads the token file and the certificates c names: an error
// naming the file's key when one cannot be read, and nothing made.
func (r *run) newFront(c *config.Config) (*front, error) {
	g, err := access.NewGuard(access.Options{Reach: reachOf(c.Details), TokenFile: c.Auth.TokenFile, Logger: r.logger})
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("%s: auth.token-file: %w", c.Where("auth.token-file"), err)}
	}
	f := &front{guard: g}
	if t := c.TLS; t != nil {
		o := access.CertOptions{CertFile: t.CertFile, KeyFile: t.KeyFile, ClientCAFile: t.ClientCAFile, Logger: r.logger}
		if f.certs, err = access.NewCerts(o); err != nil {
			return nil, &ConfigError{fmt.Errorf("%s: tls: %w", c.Where("tls"), err)}
		}
	}
	return f, nil
}

// probeHandler is what the probe listener serves under f for c: the probe
// endpoints, with the reasons for whom details: shows them, /metrics, and
// the status page, unless the file says ui: false, for whom details: lets
// read it, and its badges for everyone.
func (r *run) probeHandler(f *front, c *config.Config) http.Handler {
	metrics := getOrHead(promhttp.HandlerFor(r.registry, promhttp.HandlerOpts{ErrorLog: r.errorLog()}))
	if r.page == nil {
		// One page for the run, whatever reloads do: its start time and
		// its share of the listener's connections stay (ui.Page.Show).
		o := ui.Options{Details: c.Details != config.DetailsNone, ServiceInfo: c.ServiceInfo, Streams: max(r.probeLn.Max()/pageStreamShare, 1)}
		if len(r.services) > 0 {
			o.Services = r.servicesStatus
		}
		r.page = ui.New(r.monitor, o)
	}
	var page http.Handler
	if c.UI {
		// The badges say a status and never why, as the probe endpoints'
		// codes do: for everyone, to embed in a README or a dashboard. The
		// rest of the page is for whom details: lets read it.
		mux := http.NewServeMux()
		mux.Handle(ui.BadgePrefix, r.page.Badges())
		mux.Handle("/", f.guard.Page(servers.Rearmed(r.page)))
		page = mux
	}
	return servers.ProbeHandler(r.monitor.HandlerWithDetails(f.guard.Reasons), metrics, page)
}

// reachOf is access's word for the file's details:.
func reachOf(d config.Details) access.Reach {
	switch d {
	case config.DetailsAll:
		return access.Everyone
	case config.DetailsNone:
		return access.NoOne
	}
	return access.Local
}

// byHand is a service as the API restarts it: at once, by hand.
type byHand struct{ *supervise.Supervisor }

func (h byHand) RestartNow(reason string, run int) bool {
	return h.Supervisor.Restart(reason, run, supervise.Hand, 0)
}

// servicesStatus is the services as the status page shows them, in their
// order.
func (r *run) servicesStatus() []client.Workload {
	out := make([]client.Workload, len(r.services))
	for i, s := range r.services {
		out[i] = s.status()
	}
	return out
}

// getOrHead answers 405 to a method other than GET and HEAD, as the probe
// endpoints do: a scrape reads, and nothing else is served there.
func getOrHead(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, fmt.Sprintf("method %s not allowed: use GET or HEAD", r.Method), http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// shutdown stops srv within shutdownTimeout, saying so if it did not stop
// cleanly.
func (r *run) shutdown(srv *http.Server, what string) {
	ctx, cancel := context.WithTimeout(r.opts.Now, shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		r.logger.Warn(what+" did not stop cleanly", "err", err)
	}
}

func (r *run) serveGRPC() error {
	if r.grpcLn == nil {
		return nil
	}
	// Drain turns every service NOT_SERVING, as the probe endpoints fail
	// readiness.
	r.grpcSrv = grpc.NewServer(servers.GRPC()...)
	healthpb.RegisterHealthServer(r.grpcSrv, grpchealth.NewServer(r.monitor))
	go func() {
		err := r.grpcSrv.Serve(r.grpcLn)
		r.failed <- &RunError{fmt.Errorf("vitals run: the gRPC health server stopped: %w", err)}
	}()
	return nil
}

// stopGRPC stops the gRPC server gracefully within grpcGrace, then at once:
// Watch streams end only when their clients go, which a graceful stop would
// wait for.
func (r *run) stopGRPC(*stopping) {
	switch {
	case r.grpcSrv != nil:
	case r.grpcLn != nil:
		r.grpcLn.Close()
		return
	default:
		return
	}
	ctx, cancel := context.WithTimeout(r.opts.Now, grpcGrace)
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		r.grpcSrv.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-ctx.Done():
		r.grpcSrv.Stop()
		<-stopped
	}
}

// serveAPI serves the management API, with the checks the workload feeds
// and the workload to restart when there is one; the notices it records are
// counted in /metrics.
func (r *run) serveAPI() error {
	if r.apiLn == nil {
		return nil // off: see apiOff
	}
	opts := []api.Option{api.WithHooks(r.hooks.Status), api.WithNoticed(r.collector.Notice)}
	if r.opts.Reload != nil {
		opts = append(opts, api.WithReload(func() (client.Reloaded, error) {
			out, err := r.Reload("vitals reload")
			var bad *ConfigError
			if errors.As(err, &bad) {
				err = &api.ReloadRefused{Err: err}
			}
			return out, err
		}))
	}
	if r.sv != nil {
		services := make([]api.Service, len(r.sv.Services()))
		for i, sv := range r.sv.Services() {
			services[i] = byHand{sv}
		}
		opts = append(opts, api.WithServices(services))
	}
	r.apiSrv = servers.API(api.New(r.monitor, &r.fed, r.token, opts...), r.apiLn, r.errorLog())
	r.apiSrv.ConnContext = api.ConnContext // a client on the socket is its process, for the API's limits
	// Long waits for events and event streams end with streams, so that
	// they do not hold up the API's shutdown.
	streams, endStreams := context.WithCancel(context.Background())
	r.apiSrv.BaseContext = func(net.Listener) context.Context { return streams }
	r.endStreams = endStreams
	go func() {
		err := r.apiSrv.Serve(r.apiLn)
		r.failed <- &RunError{fmt.Errorf("vitals run: the management API stopped: %w", err)}
	}()
	return nil
}

func (r *run) stopAPI(*stopping) {
	switch {
	case r.apiLn == nil:
		return // never served
	case r.apiSrv == nil:
		r.apiLn.Close()
		return
	}
	r.endStreams()
	r.shutdown(r.apiSrv, "management API")
}

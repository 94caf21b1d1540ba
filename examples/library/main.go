// Command library shows the health engine at work on a small, made-up
// service, in a few seconds: a startup check that waits for a generated config
// file, a readiness check that expects a real HTTP answer from a dependency
// that first answers 503, and a liveness heartbeat from a work loop that hangs
// for a while. It serves the probe endpoints, prints what they answer and every
// event as it happens, and exits.
//
//	go run ./examples/library               # about 8 seconds, then exits
//	go run ./examples/library -for 0        # keeps serving until Ctrl-C; try curl on the endpoints
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/health"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address for the probe endpoints")
	runFor := flag.Duration("for", 8*time.Second, "how long to run; 0 runs until interrupted")
	flag.Parse()
	if err := run(*listen, *runFor); err != nil {
		fmt.Fprintln(os.Stderr, "library:", err)
		os.Exit(1)
	}
}

func run(listen string, runFor time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var timeUp <-chan time.Time // nil runs until interrupted
	if runFor > 0 {
		timeUp = time.After(runFor)
	}
	began := time.Now()

	// The made-up service's world: a config file a sidecar writes after 1.5s,
	// and an identity provider that answers 503 until its setup completes at 3s.
	dir, err := os.MkdirTemp("", "vitals-library")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	peerConfig := filepath.Join(dir, "peer1.conf")
	time.AfterFunc(1500*time.Millisecond, func() { os.WriteFile(peerConfig, []byte("[Peer]\n"), 0o600) })
	idp, err := serveIdentityProvider(began.Add(3 * time.Second))
	if err != nil {
		return err
	}
	defer idp.Close()

	m := health.New(health.WithLogger(slog.New(slog.DiscardHandler)))
	fast := 250 * time.Millisecond
	add := func(c health.Check) {
		if err := m.Add(c); err != nil {
			panic(err) // the checks below are valid; an error here is a bug in this program
		}
	}
	add(health.Check{Name: "peer-config", Level: health.Startup, Period: fast, FailureThreshold: 40,
		Checker: health.CheckerFunc(func(context.Context) error {
			_, err := os.Stat(peerConfig)
			return err
		})})
	add(health.Check{Name: "identity-provider", Level: health.Ready, Period: fast, FailureThreshold: 2,
		Checker: health.CheckerFunc(func(ctx context.Context) error { return get(ctx, idp.URL) })})
	loop, err := m.Heartbeat("work-loop", time.Second, health.Live)
	if err != nil {
		return err
	}
	go workLoop(ctx, loop, began)

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", listen, err)
	}
	srv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	fmt.Printf("probe endpoints on %s: /startupz /livez /readyz (add ?verbose or ?format=json)\n\n", base)

	m.Start(ctx)
	events := make(chan health.Event)
	go func() {
		follower := m.Follow(0)
		for {
			evs, _, err := follower.Next(ctx)
			if err != nil {
				return
			}
			for _, e := range evs {
				select {
				case events <- e:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-timeUp:
			fmt.Printf("\nGET %s/readyz?verbose\n%s", base, answer(base+"/readyz?verbose"))
			return nil
		case <-ctx.Done():
			return nil
		case e := <-events:
			fmt.Printf("%5.2fs  event %-13s %s\n", e.Time.Sub(began).Seconds(), e.Type, describe(e))
		case <-tick.C:
			fmt.Printf("%5.2fs  /startupz %s  /livez %s  /readyz %s\n", time.Since(began).Seconds(),
				code(base+"/startupz"), code(base+"/livez"), code(base+"/readyz"))
		}
	}
}

// workLoop beats on every pass, but hangs from 4s to 6.5s, as a loop stuck on
// a lock would.
func workLoop(ctx context.Context, hb *health.Heartbeat, began time.Time) {
	for ctx.Err() == nil {
		if since := time.Since(began); since < 4*time.Second || since > 6500*time.Millisecond {
			hb.Beat()
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func serveIdentityProvider(ready time.Time) (*identityProvider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if time.Now().Before(ready) {
			http.Error(w, "OIDC Setup is not complete yet.", http.StatusServiceUnavailable)
			return
		}
		http.Redirect(w, r, "/dex/auth", http.StatusFound)
	})}
	go srv.Serve(ln)
	return &identityProvider{URL: "http://" + ln.Addr().String(), srv: srv}, nil
}

type identityProvider struct {
	URL string
	srv *http.Server
}

func (h *identityProvider) Close() { h.srv.Close() }

// get passes on a 2xx or 3xx answer, as the kubelet's HTTP probe does.
func get(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	client := http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode >= 400 {
		return errors.New("HTTP probe failed with statuscode: " + fmt.Sprint(res.StatusCode))
	}
	return nil
}

func code(url string) string {
	res, err := http.Get(url)
	if err != nil {
		return "error"
	}
	res.Body.Close()
	return fmt.Sprint(res.StatusCode)
}

func answer(url string) string {
	res, err := http.Get(url)
	if err != nil {
		return err.Error() + "\n"
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return fmt.Sprintf("%d\n%s", res.StatusCode, b)
}

func describe(e health.Event) string {
	if e.Check == "" {
		return fmt.Sprintf("%s (%s)", e.Level, e.Output)
	}
	s := fmt.Sprintf("%s %s: %s -> %s", e.Level, e.Check, e.From, e.To)
	if e.Output != "" {
		s += " (" + strings.TrimSpace(e.Output) + ")"
	}
	return s
}

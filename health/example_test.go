package health_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// A Go service serves /readyz from a Monitor: readiness waits for a generated
// file (the peer config a sidecar writes) and a dependency, and a heartbeat
// from the main loop keeps /livez honest.
func Example() {
	config, _ := os.CreateTemp("", "peer*.conf")
	config.Close()
	defer os.Remove(config.Name())

	m := health.New(health.WithLogger(slog.New(slog.DiscardHandler)))
	m.Add(health.Check{
		Name:  "peer-config",
		Level: health.Ready,
		Checker: health.CheckerFunc(func(ctx context.Context) error {
			_, err := os.Stat(config.Name())
			return err
		}),
		Period:           50 * time.Millisecond,
		SuccessThreshold: 1,
	})
	m.Add(health.Check{
		Name:    "database",
		Level:   health.Ready,
		Checker: health.CheckerFunc(func(ctx context.Context) error { return nil }), // db.PingContext
		Period:  50 * time.Millisecond,
	})
	loop, _ := m.Heartbeat("main-loop", 5*time.Second, health.Live)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.Start(ctx)
	loop.Beat() // in the service's loop, on every pass

	mux := http.NewServeMux()
	mux.Handle("/", m.Handler()) // serves /livez, /readyz, /startupz, /healthz
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for !m.Passing(health.Ready) {
		time.Sleep(10 * time.Millisecond)
	}
	res, err := http.Get(srv.URL + "/readyz?verbose")
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(res.StatusCode)
	fmt.Print(string(body))
	// Output:
	// 200
	// [+]peer-config ok
	// [+]database ok
	// [+]main-loop ok
	// [+]shutdown ok
	// readyz check passed
}

// An operator's reconciler reports to a watchdog, so that liveness fails when
// a Reconcile call hangs, and the Monitor backs controller-runtime's probes.
func ExampleMonitor_Watchdog() {
	m := health.New(health.WithLogger(slog.New(slog.DiscardHandler)))
	reconciles, err := m.Watchdog("reconcile", 2*time.Minute, health.Live)
	if err != nil {
		fmt.Println(err)
		return
	}
	reconcile := func(ctx context.Context) error {
		done := reconciles.Begin()
		defer done()
		// ... the reconciler's work ...
		return nil
	}
	_ = reconcile(context.Background())

	// With controller-runtime:
	//   mgr.AddHealthzCheck("vitals", m.Checker(health.Live))
	//   mgr.AddReadyzCheck("vitals", m.Checker(health.Ready))
	livez := m.Checker(health.Live)
	fmt.Println(livez(nil))
	// Output: <nil>
}

// Adding a check explains what is wrong with it.
func ExampleMonitor_Add() {
	m := health.New()
	err := m.Add(health.Check{Name: "Database", Level: health.Ready,
		Checker: health.CheckerFunc(func(context.Context) error { return nil })})
	fmt.Println(err)
	fmt.Println(errors.Is(err, health.ErrInvalidCheck))
	// Output:
	// check "Database": name must match [a-z0-9]([-a-z0-9_.]*[a-z0-9])? and be at most 63 characters: invalid check
	// true
}

// A program tells whoever follows its events that its configuration was
// reloaded: a notice, in the log with the checks' events. A key out of
// bounds is refused, and nothing is recorded.
func ExampleMonitor_Notify() {
	m := health.New(health.WithLogger(slog.New(slog.DiscardHandler)))
	e, err := m.Notify("example.com/config-reloaded", map[string]string{"generation": "4"})
	fmt.Println(e.ID, e.Type, e.Key, e.Data, err)

	_, err = m.Notify("Config Reloaded", nil)
	fmt.Println(err)
	fmt.Println(m.LastEventID())
	// Output:
	// 1 notice example.com/config-reloaded map[generation:4] <nil>
	// notice key "Config Reloaded": want lower-case words of letters and digits joined by -, in parts separated by /, after a domain or not: example.com/config-reloaded, db/leader-elected, config-reloaded
	// 1
}

// Command alexliesenfeld serves github.com/alexliesenfeld/health with -checks
// trivial checks on /readyz. By default the checks are periodic
// (WithPeriodicCheck, every hour, first run at once), so a request reads the
// last results rather than running the checks: the configuration a careful
// user picks for a probe endpoint. With -sync they are the library's default
// synchronous checks (WithCheck), run by a request when the last result is
// older than the default cache duration of 1s.
package main

import (
	"context"
	"flag"
	"net/http"
	"time"

	"github.com/alexliesenfeld/health"

	"github.com/vitals-dev/vitals/bench/servers/internal/serve"
)

var sync = flag.Bool("sync", false, "synchronous checks (the library's default) instead of periodic ones")

func main() {
	n := serve.Checks()
	opts := make([]health.CheckerOption, 0, n)
	for i := range n {
		c := health.Check{Name: serve.CheckName(i), Check: func(context.Context) error { return nil }}
		if *sync {
			opts = append(opts, health.WithCheck(c))
		} else {
			opts = append(opts, health.WithPeriodicCheck(time.Hour, 0, c))
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/readyz", health.NewHandler(health.NewChecker(opts...)))
	serve.Run(mux)
}

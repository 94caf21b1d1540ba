// Command vitals serves a health.Monitor with -checks trivial ready checks
// (a checker that returns nil, period 1h), started, on /livez, /readyz,
// /startupz and /healthz, mounted as a service would mount it.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/vitals-dev/vitals/bench/servers/internal/serve"
	"github.com/vitals-dev/vitals/health"
)

func main() {
	n := serve.Checks()
	m := health.New(health.WithLogger(slog.New(slog.DiscardHandler)))
	for i := range n {
		err := m.Add(health.Check{
			Name:    serve.CheckName(i),
			Level:   health.Ready,
			Checker: health.CheckerFunc(func(context.Context) error { return nil }),
			Period:  time.Hour,
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	m.Start(context.Background())
	serve.Run(m.Handler())
}

// Command vitals runs health checks: one now (vitals probe), until targets
// pass (vitals wait), and, as an agent, all the time.
package main

import (
	"os"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}

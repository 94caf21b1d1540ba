//go:build !vitals_probe

package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/agent"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

// DefaultConfig is the file vitals run and vitals validate read unless told.
const DefaultConfig = "vitals.yaml"

// loadConfig reads the file, turning its errors into a configError.
func loadConfig(path string, o config.Options) (*config.Config, error) {
	c, err := config.Load(path, kinds.All, o)
	var errs config.Errors
	if errors.As(err, &errs) {
		return nil, configError{errs}
	}
	return c, err
}

func newValidate(stdout io.Writer) *cobra.Command {
	var (
		file    string
		print   bool
		offline bool
		output  *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "validate [-c vitals.yaml] [--print] [-o text|json|yaml]",
		Short: "Check a configuration file: every error at once, with file, line and field",
		Long: `Check a configuration file as vitals run would, without starting anything:
every error at once, each as FILE:LINE:COL: PATH: what is wrong. Exit 0 when
the file is good, 2 when it is not. --print shows the file as vitals reads it,
with every default filled in: as YAML, or with -o json as the same document in
JSON. Without --print, -o json and -o yaml write {"file": FILE, "checks": N}.
-c - reads the file from stdin.

--offline checks a file for another machine, such as a CI job on another
image than the one vitals runs in: nothing is looked for on this machine. The
commands of exec checks and exec hooks are not looked up in $PATH, an exec
check's dir is not looked for, and the files mounted where vitals runs (ca-file,
cert and key of the TLS fields, api-token-file, the files of tls: and auth:)
are not read; everything else
is checked, ${VAR}s included. (The service's command is looked up by vitals run
only, where the workload runs.)`,
		Example: `  vitals validate -c /etc/vitals/vitals.yaml
  vitals validate --print
  vitals validate --print -o json | jq .checks
  vitals validate --offline -c deploy/vitals.yaml
  kubectl get configmap vitals -o jsonpath='{.data.vitals\.yaml}' | vitals validate -c -`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			c, err := loadConfig(file, config.Options{Offline: offline})
			if err != nil {
				return err
			}
			// What vitals run builds from the file alone: a file that
			// validates is a file that starts. Offline, the exec checks
			// cannot be built: their commands are on another machine.
			if !offline {
				if _, err := agent.New(c, agent.Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
					return agentError(err)
				}
			}
			switch {
			case print:
				return output.writeFile(stdout, []byte(agent.Render(c)))
			case output.document():
				return output.write(stdout, validated{File: c.File, Checks: len(c.Checks)})
			}
			fmt.Fprintf(stdout, "ok: %s: %d checks\n", c.File, len(c.Checks))
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "config", "c", DefaultConfig, "the configuration file, - for stdin")
	cmd.Flags().BoolVar(&print, "print", false, "print the file with its defaults filled in")
	cmd.Flags().BoolVar(&offline, "offline", false, "check the file for another machine: look up no exec command or directory, and read no ca-file, cert, key, bearer-token-file or api-token-file, here")
	output = addOutput(cmd, false)
	cmd.MarkFlagFilename("config", "yaml", "yml")
	return cmd
}

// validated is what vitals validate -o json and -o yaml say of a good file.
type validated struct {
	File   string `json:"file"`
	Checks int    `json:"checks"` // how many checks it has
}

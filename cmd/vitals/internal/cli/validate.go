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

// configUsage says what -c takes, for vitals run and vitals validate.
const configUsage = "the configuration file, - for stdin; a directory is its *.yaml and *.yml files in name order; given again, a layer over those before it"

// loadConfig reads the files as layers, turning their errors into a
// configError.
func loadConfig(paths []string, o config.Options) (*config.Config, error) {
	c, err := config.LoadLayers(paths, kinds.All, o)
	var errs config.Errors
	if errors.As(err, &errs) {
		return nil, configError{errs}
	}
	return c, err
}

func newValidate(stdout io.Writer) *cobra.Command {
	var (
		files   []string
		print   bool
		offline bool
		output  *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "validate [-c vitals.yaml]... [--print] [-o text|json|yaml]",
		Short: "Check a configuration file: every error at once, with file, line and field",
		Long: `Check a configuration file as vitals run would, without starting anything:
every error at once, each as FILE:LINE:COL: PATH: what is wrong. Exit 0 when
the file is good, 2 when it is not. --print shows the file as vitals reads it,
with every default filled in: as YAML, or with -o json as the same document in
JSON. Without --print, -o json and -o yaml write {"file": FILE, "checks": N}.
-c - reads the file from stdin.

-c given again, or naming a directory (its *.yaml and *.yml files, in name
order), checks the files as layers, as vitals run reads them: each error in
the file of the layer that has it. --print shows their merge, each line that
a layer gives ending in a comment that says where (# 010-prod.yaml:7; a
merged entry lists each layer's), the others being defaults; -o json and
-o yaml then add "files": [FILE...].

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
  vitals validate -c /etc/vitals/ --print
  vitals validate -c base.yaml -c prod.yaml
  vitals validate --offline -c deploy/vitals.yaml
  kubectl get configmap vitals -o jsonpath='{.data.vitals\.yaml}' | vitals validate -c -`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			c, err := loadConfig(files, config.Options{Offline: offline})
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
				v := validated{File: c.File, Checks: len(c.Checks)}
				if len(c.Files) > 1 {
					v.Files = c.Files
				}
				return output.write(stdout, v)
			}
			fmt.Fprintf(stdout, "ok: %s: %d checks\n", c.File, len(c.Checks))
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "config", "c", []string{DefaultConfig}, configUsage)
	cmd.Flags().BoolVar(&print, "print", false, "print the file with its defaults filled in")
	cmd.Flags().BoolVar(&offline, "offline", false, "check the file for another machine: look up no exec command or directory, and read no ca-file, cert, key, bearer-token-file or api-token-file, here")
	output = addOutput(cmd, false)
	cmd.MarkFlagFilename("config", "yaml", "yml")
	return cmd
}

// validated is what vitals validate -o json and -o yaml say of a good file.
type validated struct {
	File string `json:"file"`
	// Files are the layers, when there are several.
	Files  []string `json:"files,omitempty"`
	Checks int      `json:"checks"` // how many checks it has
}

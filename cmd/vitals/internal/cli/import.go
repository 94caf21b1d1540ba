//go:build !vitals_probe

package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/importer"
)

func newImport(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import pebble|k8s FILE",
		Short: "Write a vitals.yaml from a Pebble layer's checks or a Kubernetes workload's probes",
		Long: `Write a vitals.yaml on stdout with the checks another tool already has, with
the same timing: a Pebble layer's checks, or a Kubernetes workload's probes.
What cannot be carried over as it is, is said on stderr, one line each, and
as a comment in the file where it belongs; nothing is dropped silently. -o
json writes the same document as JSON, without the comments. The
file is loaded as vitals validate would before it is written; what would
fail on this machine only (an exec check's command not in $PATH here) is a
warning.

Exit codes: 0 written, 2 bad usage or a file that cannot be imported.`,
		Example: `  vitals import pebble /var/lib/pebble/default/layers/001-synapse.yaml > vitals.yaml
  vitals import k8s deploy.yaml --container web > vitals.yaml
  kubectl get deployment web -o yaml | vitals import k8s -`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("say what to import from: vitals import pebble FILE, or vitals import k8s FILE")
		},
	}
	cmd.AddCommand(newImportPebble(stdout, stderr), newImportK8s(stdout, stderr))
	return cmd
}

func newImportPebble(stdout, stderr io.Writer) *cobra.Command {
	var output *outputFlag
	cmd := &cobra.Command{
		Use:   "pebble LAYER.yaml [-o text|json|yaml]",
		Short: "Write a vitals.yaml from a Pebble layer's checks",
		Long: `Write a vitals.yaml from a Pebble layer's checks: level alive is live and
ready is ready; period and timeout (Pebble's default 3s) are kept, and
threshold is the failure-threshold; an http check passes on 2xx, as in
Pebble; an exec check's command is split into words as Pebble splits it.
A service's on-check-failure becomes the check's on-failure (restart is
restart; shutdown and success-shutdown are exit, which exits 1). A layer
with one service makes it vitals's service: (command, environment,
working-dir, backoff, kill-delay as stop-timeout, on-success and on-failure
as the nearest restart policy); with several, they are written as comments,
since vitals runs one workload. Give - to read the layer from stdin.`,
		Example: `  vitals import pebble layers/001-synapse.yaml > vitals.yaml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, data, err := readSource(cmd, args[0])
			if err != nil {
				return err
			}
			r, err := importer.Pebble(name, data)
			return writeImport(stdout, stderr, output, r, err)
		},
	}
	output = addOutput(cmd, false)
	return cmd
}

func newImportK8s(stdout, stderr io.Writer) *cobra.Command {
	var (
		container string
		output    *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "k8s MANIFEST.yaml [--container NAME] [-o text|json|yaml]",
		Short: "Write a vitals.yaml from a Kubernetes workload's probes",
		Long: `Write a vitals.yaml from the startupProbe, livenessProbe and readinessProbe
of a workload's containers, as checks CONTAINER-startup, CONTAINER-live and
CONTAINER-ready with the timing the probes have once the API server fills in
its defaults: httpGet as http, tcpSocket as tcp, exec as exec, grpc as grpc
(grpc://localhost:PORT/SERVICE, plaintext as the kubelet's). The manifest may
hold Pods, Deployments, StatefulSets, DaemonSets, Jobs, CronJobs and anything
else with a pod template, in one or more YAML documents.

Without --container, every container of the file's workload is imported
(and its native sidecars); a file with several workloads needs --container,
as vitals runs in one pod. --container NAME, or WORKLOAD/NAME, imports that
container alone. vitals supervises one workload, so the file has no service:
block: run vitals in one container with that container's command after --.
With several containers, their checks all run where vitals runs, and the
warnings say what differs: an exec probe ran in its own container, and a
failing liveness probe restarted only its container.

A probe with no host probes localhost, the pod seen from inside it. Give -
to read the manifest from stdin.`,
		Example: `  vitals import k8s deploy.yaml > vitals.yaml
  vitals import k8s pod.yaml --container web > vitals.yaml
  vitals import k8s manifests.yaml --container web/app > vitals.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, data, err := readSource(cmd, args[0])
			if err != nil {
				return err
			}
			r, err := importer.Kubernetes(name, data, container)
			return writeImport(stdout, stderr, output, r, err)
		},
	}
	cmd.Flags().StringVar(&container, "container", "", "the one container whose probes to import: NAME, or WORKLOAD/NAME (default every container of the file's one workload)")
	cmd.RegisterFlagCompletionFunc("container", cobra.NoFileCompletions)
	output = addOutput(cmd, false)
	return cmd
}

// readSource reads the file to import; - is stdin.
func readSource(cmd *cobra.Command, path string) (string, []byte, error) {
	name, r := "stdin", cmd.InOrStdin()
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return "", nil, configError{fmt.Errorf("vitals import: %w", err)}
		}
		defer f.Close()
		name, r = path, f
	}
	// Read as vitals.yaml is: a FIFO or a device that never ends is read no
	// further than the bound.
	data, err := io.ReadAll(io.LimitReader(r, config.MaxFileSize+1))
	if err != nil {
		return "", nil, configError{fmt.Errorf("vitals import: read %s: %w", name, err)}
	}
	if len(data) > config.MaxFileSize {
		return "", nil, configError{fmt.Errorf("vitals import: %s: larger than %d MiB: is it a Pebble layer or a manifest? (it is read no further)", name, config.MaxFileSize>>20)}
	}
	return name, data, nil
}

// writeImport writes the warnings to stderr and the file to stdout, as
// output says; a file that could not be imported is an error that exits 2,
// after the warnings, which may say why.
func writeImport(stdout, stderr io.Writer, output *outputFlag, r importer.Result, err error) error {
	for _, w := range r.Warnings {
		fmt.Fprintf(stderr, "vitals import: warning: %s\n", w)
	}
	if err != nil {
		return configError{fmt.Errorf("vitals import: %w", err)}
	}
	return output.writeFile(stdout, r.YAML)
}

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
		Short: "Write a vitals.yaml from a Pebble layer or a Kubernetes workload's probes",
		Long: `Write a vitals.yaml on stdout with the checks another tool already has, with
the same timing, and how it runs its services: a Pebble layer's services and
checks, or a Kubernetes workload's probes and restart rules.
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
	var (
		output    *outputFlag
		layerFile string
	)
	cmd := &cobra.Command{
		Use:   "pebble LAYER.yaml [--layer FILE] [-o text|json|yaml]",
		Short: "Write a vitals.yaml from a Pebble layer's services and checks, and the layer that runs it",
		Long: `Write a vitals.yaml from a Pebble layer: level alive is live and ready is
ready; period and timeout (Pebble's default 3s) are kept, and threshold is
the failure-threshold; an http check passes on 2xx, as in Pebble; an exec
check's command is split into words as Pebble splits it; startup: disabled
is kept, and vitals start NAME starts the check.

Every service of the layer is an entry of services:, with its command,
environment, working-dir, backoff, kill-delay as stop-timeout, after, before
and requires; its on-success and on-failure are restart: and restart-rules:
(ignore is a rule whose action is ignore; where Pebble shut down, vitals
exits with the service's code, not 10 or 0, and the file says so). A
service's on-check-failure becomes the check's on-failure with service: NAME
(restart is restart; shutdown and success-shutdown are exit, which exits 1);
when several services act on one check, it does the strongest: exit, then
restart, then ignore.

Beside it comes the Pebble layer that runs this vitals under Pebble, so that
Pebble and Juju see its verdict, to add in the place of the layer imported:
a service named as the layer's one service (else vitals) that runs vitals run
-c vitals.yaml, with a kill-delay past the file's stop-timeouts, restarted
when the check vitals-alive (/livez) fails, and the checks vitals-alive and
vitals-ready (/readyz). --layer FILE writes it to FILE; without it, the file
ends with it as comments (which -o json drops). Give - to read the layer
from stdin.`,
		Example: `  vitals import pebble layers/001-synapse.yaml > vitals.yaml
  vitals import pebble layers/001-synapse.yaml --layer 002-vitals.yaml > vitals.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, data, err := readSource(cmd, args[0])
			if err != nil {
				return err
			}
			if err := sameFile(layerFile, args[0]); err != nil {
				return err
			}
			r, err := importer.Pebble(name, data, layerFile)
			if err == nil && layerFile != "" {
				if werr := os.WriteFile(layerFile, r.Layer, 0o644); werr != nil {
					err = fmt.Errorf("--layer: %w", werr)
				}
			}
			return writeImport(stdout, stderr, output, r, err)
		},
	}
	cmd.Flags().StringVar(&layerFile, "layer", "", "write the Pebble layer that runs this vitals to `FILE` (default: as comments at the end of the file)")
	output = addOutput(cmd, false)
	return cmd
}

// sameFile refuses a --layer that would overwrite the layer read.
func sameFile(layerFile, source string) error {
	if layerFile == "" || source == "-" {
		return nil
	}
	out, err := os.Stat(layerFile)
	if err != nil {
		return nil // not there yet: it is written
	}
	if in, err := os.Stat(source); err == nil && os.SameFile(in, out) {
		return configError{fmt.Errorf("vitals import: --layer %s is the layer read: give another file", layerFile)}
	}
	return nil
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
container alone. Run vitals in that container, with its command after --.
Its own restartPolicy and restartPolicyRules (KEP-5307) become the service:
block's restart and restart-rules (Restart is restart; RestartAllContainers
is exit, for the kubelet's rule to restart them all), so that vitals
restarts the workload where the kubelet restarted the container; the pod's
restartPolicy stays the kubelet's, which applies it to vitals's exit. A
liveness or startup probe's own terminationGracePeriodSeconds becomes its
check's stop-timeout, with on-failure: exit: vitals stops the workload with
that grace, as the kubelet did, and exits for the kubelet to restart the
container.

With several containers, the file has no service:; their checks all run
where vitals runs, and the warnings say what differs: an exec probe ran in
its own container, a failing liveness probe restarted only its container,
and their restart rules and probes' grace stay the kubelet's.

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

//go:build !vitals_probe

package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/access"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/fleet"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube"
)

// DefaultFleetCondition is the condition type vitals fleet reads: the one
// the documentation's examples give kubernetes.condition, as no type is
// vitals.yaml's default.
const DefaultFleetCondition = "vitals.dev/ready"

// fleetFlags are vitals fleet's flags.
type fleetFlags struct {
	namespaces                 []string
	all, once                  bool
	ko                         kube.Options
	selector, condition        string
	podPort, listen, details   string
	tokenFile, tlsCert, tlsKey string
	clientCA                   string
	timeout                    time.Duration
	output                     *outputFlag
	reach                      access.Reach
}

func newFleet(stdout, stderr io.Writer) *cobra.Command {
	var ff fleetFlags
	cmd := &cobra.Command{
		Use:   "fleet [-n NAMESPACE]... [-A] [-l SELECTOR] [--once [-o text|json|yaml]]",
		Short: "Show the pods vitals runs in, with their vitals condition and Events, live",
		Long: `Watch the pods of one or more namespaces (-n, again or comma-separated; -A for
every namespace; the kubeconfig context's namespace without either), narrowed
by a label selector (-l), and serve a read-only page of them on --listen: one
row per pod with its vitals condition (--condition, the type kubernetes.condition
writes) and since when, Ready, restarts, age, and the Events vitals wrote on it,
newest first; a summary at the top; live as the cluster changes. The page is
served as the agent's status page is: to clients on loopback and to those with
the token (--token-file) or a client certificate (--client-ca), over TLS with
--tls-cert and --tls-key.

It reads through the API server's watches and keeps nothing of its own. Its
RBAC: list and watch on pods and events, in a Role per namespace or a
ClusterRole for -A.

--once prints the same, once, for scripts: a table (-o text, the default), or -o json, -o yaml.`,
		Example: `  vitals fleet -n shop                      # http://127.0.0.1:8559/
  vitals fleet -A -l app.kubernetes.io/part-of=shop --context prod
  vitals fleet -n shop --once -o json | jq '.summary'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ff.check(); err != nil {
				return err
			}
			return ff.run(stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVarP(&ff.namespaces, "namespace", "n", nil, "a namespace to watch (again, or comma-separated, for more); default the kubeconfig context's")
	fl.BoolVarP(&ff.all, "all-namespaces", "A", false, "watch every namespace (a ClusterRole's list and watch)")
	fl.StringVarP(&ff.selector, "selector", "l", "", "a label selector of the pods, as kubectl's -l (app=api,tier!=cache)")
	fl.StringVar(&ff.ko.Kubeconfig, "kubeconfig", "", "the kubeconfig file; default KUBECONFIG, else ~/.kube/config, else the pod's service account")
	fl.StringVar(&ff.ko.Context, "context", "", "the kubeconfig context; default its current one")
	fl.StringVar(&ff.condition, "condition", DefaultFleetCondition, "the pod condition type vitals writes (kubernetes.condition in vitals.yaml)")
	fl.StringVar(&ff.podPort, "pod-port", "8558", "the port of each pod's own status page (vitals run's listen), for the port-forward command")
	fl.StringVar(&ff.listen, "listen", fleet.DefaultListen, "where to serve the page")
	fl.StringVar(&ff.details, "details", "local", "who reads the page: local (loopback, the token, a client certificate), all, or none (as local, the Events' messages withheld)")
	fl.StringVar(&ff.tokenFile, "token-file", "", "a file whose bearer token lets a client off loopback read the page")
	fl.StringVar(&ff.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (with --tls-key)")
	fl.StringVar(&ff.tlsKey, "tls-key", "", "the certificate's PEM key")
	fl.StringVar(&ff.clientCA, "client-ca", "", "PEM authorities whose client certificates let a client read the page")
	fl.BoolVar(&ff.once, "once", false, "print the fleet once and exit, instead of serving the page")
	fl.DurationVar(&ff.timeout, "timeout", 30*time.Second, "how long the first list of the pods and Events may take")
	ff.output = addOutput(cmd, false) // text is the table: it has no wide
	complete(cmd, "details", "local", "all", "none")
	cmd.MarkFlagFilename("kubeconfig")
	return cmd
}

// check says what is wrong with the flags, and settles the namespaces:
// each once, or the kubeconfig context's (run's).
func (ff *fleetFlags) check() error {
	if ff.all && len(ff.namespaces) > 0 {
		return fmt.Errorf("-A and -n: give one or the other")
	}
	for _, ns := range ff.namespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("--namespace %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	slices.Sort(ff.namespaces)
	ff.namespaces = slices.Compact(ff.namespaces) // -n shop -n shop: its pods once
	if _, err := labels.Parse(ff.selector); err != nil {
		return fmt.Errorf("--selector %q: %w", ff.selector, err)
	}
	if errs := validation.IsQualifiedName(ff.condition); len(errs) > 0 {
		return fmt.Errorf("--condition %q: %s", ff.condition, strings.Join(errs, "; "))
	}
	var err error
	if ff.reach, err = fleetReach(ff.details); err != nil {
		return err
	}
	if (ff.tlsCert == "") != (ff.tlsKey == "") || ff.clientCA != "" && ff.tlsCert == "" {
		return fmt.Errorf("--tls-cert and --tls-key go together, and --client-ca needs them")
	}
	if ff.timeout <= 0 {
		return fmt.Errorf("--timeout %v: must be positive", ff.timeout)
	}
	return nil
}

// run watches the fleet; with --once it prints it once listed, else it
// serves the page at once, which says "not listed yet" (and /readyz 503)
// until the first list is done, so that the kubelet's probes see a fleet
// that lists slowly as alive, not ready.
func (ff *fleetFlags) run(stdout, stderr io.Writer) error {
	config, namespace, err := kube.Connect(ff.ko)
	if err != nil {
		return failed{err.Error()}
	}
	namespaces := ff.namespaces
	switch {
	case ff.all:
		namespaces = []string{metav1.NamespaceAll}
	case len(namespaces) == 0:
		namespaces = []string{namespace}
	}
	logger, _ := newLogger(stderr, "text", "info") // valid: no error
	f, err := fleet.New(fleet.Config{Kube: config, Namespaces: namespaces, Selector: ff.selector, Logger: logger,
		Rows: fleet.Options{Condition: ff.condition, PodPort: ff.podPort, Withhold: ff.reach == access.NoOne}})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f.Start(ctx)
	synced, cancel := context.WithTimeout(ctx, ff.timeout)
	defer cancel()
	if ff.once {
		if err := f.WaitForSync(synced); err != nil {
			if ctx.Err() != nil {
				return nil // a signal: nothing to print
			}
			return failed{"vitals fleet: " + err.Error()}
		}
		v := fleet.Select(f.Rows(), fleet.Filter{})
		if ff.output.document() {
			return ff.output.write(stdout, v)
		}
		return fleet.WriteTable(stdout, v, time.Now())
	}
	go func() {
		if err := f.WaitForSync(synced); err != nil && ctx.Err() == nil {
			logger.Warn("vitals fleet: the pods and their Events are not listed yet; it goes on trying", "err", err)
		}
	}()
	o := fleet.ServeOptions{Listen: ff.listen, Reach: ff.reach, TokenFile: ff.tokenFile, Logger: logger,
		Serving: func(addr string) {
			logger.Info("vitals fleet: serving the page", "url", scheme(ff.tlsCert)+"://"+addr+"/")
		}}
	if ff.tlsCert != "" {
		o.TLS = &access.CertOptions{CertFile: ff.tlsCert, KeyFile: ff.tlsKey, ClientCAFile: ff.clientCA, Logger: logger}
	}
	if err := f.Serve(ctx, o); err != nil {
		return failed{"vitals fleet: " + err.Error()}
	}
	return nil
}

// fleetReach is access's word for --details.
func fleetReach(details string) (access.Reach, error) {
	switch details {
	case "local":
		return access.Local, nil
	case "all":
		return access.Everyone, nil
	case "none":
		return access.NoOne, nil
	}
	return 0, fmt.Errorf("--details %q: use local, all or none", details)
}

func scheme(tlsCert string) string {
	if tlsCert != "" {
		return "https"
	}
	return "http"
}

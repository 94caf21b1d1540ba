//go:build !vitals_probe

package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
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

func newFleet(stdout, stderr io.Writer) *cobra.Command {
	var (
		namespaces                 []string
		all, once                  bool
		ko                         kube.Options
		selector, condition        string
		podPort, listen, details   string
		tokenFile, tlsCert, tlsKey string
		clientCA                   string
		timeout                    time.Duration
		output                     *outputFlag
	)
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
RBAC: get, list and watch on pods and events, in a Role per namespace or a
ClusterRole for -A.

--once prints the same, once, for scripts: a table (-o text, the default), or -o json, -o yaml.`,
		Example: `  vitals fleet -n shop                      # http://127.0.0.1:8559/
  vitals fleet -A -l app.kubernetes.io/part-of=shop --context prod
  vitals fleet -n shop --once -o json | jq '.summary'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if all && len(namespaces) > 0 {
				return fmt.Errorf("-A and -n: give one or the other")
			}
			for _, ns := range namespaces {
				if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
					return fmt.Errorf("--namespace %q: %s", ns, strings.Join(errs, "; "))
				}
			}
			if _, err := labels.Parse(selector); err != nil {
				return fmt.Errorf("--selector %q: %w", selector, err)
			}
			if errs := validation.IsQualifiedName(condition); len(errs) > 0 {
				return fmt.Errorf("--condition %q: %s", condition, strings.Join(errs, "; "))
			}
			reach, err := fleetReach(details)
			if err != nil {
				return err
			}
			if (tlsCert == "") != (tlsKey == "") || clientCA != "" && tlsCert == "" {
				return fmt.Errorf("--tls-cert and --tls-key go together, and --client-ca needs them")
			}
			if timeout <= 0 {
				return fmt.Errorf("--timeout %v: must be positive", timeout)
			}
			config, namespace, err := kube.Connect(ko)
			if err != nil {
				return failed{err.Error()}
			}
			switch {
			case all:
				namespaces = []string{metav1.NamespaceAll}
			case len(namespaces) == 0:
				namespaces = []string{namespace}
			}
			logger, _ := newLogger(stderr, "text", "info") // valid: no error
			f, err := fleet.New(fleet.Config{Kube: config, Namespaces: namespaces, Selector: selector, Logger: logger,
				Rows: fleet.Options{Condition: condition, PodPort: podPort, Withhold: reach == access.NoOne}})
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			f.Start(ctx)
			synced, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			if err := f.WaitForSync(synced); err != nil {
				return failed{"vitals fleet: " + err.Error()}
			}
			if once {
				v := fleet.Select(f.Rows(), fleet.Filter{})
				if output.document() {
					return output.write(stdout, v)
				}
				return fleet.WriteTable(stdout, v, time.Now())
			}
			o := fleet.ServeOptions{Listen: listen, Reach: reach, TokenFile: tokenFile, Logger: logger,
				Serving: func(addr string) {
					logger.Info("vitals fleet: serving the page", "url", scheme(tlsCert)+"://"+addr+"/")
				}}
			if tlsCert != "" {
				o.TLS = &access.CertOptions{CertFile: tlsCert, KeyFile: tlsKey, ClientCAFile: clientCA, Logger: logger}
			}
			if err := f.Serve(ctx, o); err != nil {
				return failed{"vitals fleet: " + err.Error()}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVarP(&namespaces, "namespace", "n", nil, "a namespace to watch (again, or comma-separated, for more); default the kubeconfig context's")
	fl.BoolVarP(&all, "all-namespaces", "A", false, "watch every namespace (a ClusterRole's list and watch)")
	fl.StringVarP(&selector, "selector", "l", "", "a label selector of the pods, as kubectl's -l (app=api,tier!=cache)")
	fl.StringVar(&ko.Kubeconfig, "kubeconfig", "", "the kubeconfig file; default KUBECONFIG, else ~/.kube/config, else the pod's service account")
	fl.StringVar(&ko.Context, "context", "", "the kubeconfig context; default its current one")
	fl.StringVar(&condition, "condition", DefaultFleetCondition, "the pod condition type vitals writes (kubernetes.condition in vitals.yaml)")
	fl.StringVar(&podPort, "pod-port", "8558", "the port of each pod's own status page (vitals run's listen), for the port-forward command")
	fl.StringVar(&listen, "listen", fleet.DefaultListen, "where to serve the page")
	fl.StringVar(&details, "details", "local", "who reads the page: local (loopback, the token, a client certificate), all, or none (as local, the Events' messages withheld)")
	fl.StringVar(&tokenFile, "token-file", "", "a file whose bearer token lets a client off loopback read the page")
	fl.StringVar(&tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (with --tls-key)")
	fl.StringVar(&tlsKey, "tls-key", "", "the certificate's PEM key")
	fl.StringVar(&clientCA, "client-ca", "", "PEM authorities whose client certificates let a client read the page")
	fl.BoolVar(&once, "once", false, "print the fleet once and exit, instead of serving the page")
	fl.DurationVar(&timeout, "timeout", 30*time.Second, "how long the first list of the pods and Events may take")
	output = addOutput(cmd, false) // text is the table: it has no wide
	complete(cmd, "details", "local", "all", "none")
	cmd.MarkFlagFilename("kubeconfig")
	return cmd
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

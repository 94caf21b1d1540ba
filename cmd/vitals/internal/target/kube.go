//go:build !vitals_probe

package target

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube"
	"github.com/vitals-dev/vitals/cmd/vitals/kubewait"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// The full build's k8s:// targets: Kubernetes objects, followed through the
// API server's watch until ready (package kubewait). The probe build leaves
// them out (kube_probe.go), as they link client-go.

// KubeBuilt says whether this build has k8s:// targets.
const KubeBuilt = true

// KubeHelp is the k8s:// lines of the commands' help on targets.
const KubeHelp = `
  k8s://KIND/NAME                        a Kubernetes object ready: a deployment, statefulset or
                                         daemonset rolled out (as kubectl rollout status), a job
                                         complete, a pod Ready (-n, --kubeconfig, --context)
  k8s://pods?selector=app%3Dweb          at least one pod matches, and every one is Ready;
                                         &count=1: exactly one
  k8s://RESOURCE/NAME?condition=Ready    any object with a status condition, as kubectl wait
                                         --for=condition=Ready (certificates.cert-manager.io/web)`

// buildKube makes the Target of a k8s:// target: its Measure looks once
// (vitals probe), its Watch follows the objects until ready (vitals wait).
// A bad target, flag or kubeconfig is an error here, before any request.
func buildKube(target string, o Options) (Target, error) {
	t, err := kubewait.Parse(target)
	if err != nil {
		return Target{}, err
	}
	f := o.flagSet()
	var ko kube.Options
	for name, p := range map[string]*string{"kubeconfig": &ko.Kubeconfig, "context": &ko.Context, "namespace": &ko.Namespace} {
		*p, _ = f.GetString(name) // "" when the flag is not defined: the default
	}
	if ko.Namespace != "" {
		if errs := validation.IsDNS1123Label(ko.Namespace); len(errs) > 0 {
			return Target{}, fmt.Errorf("--namespace %q: %s", ko.Namespace, strings.Join(errs, "; "))
		}
	}
	config, namespace, err := kube.Connect(ko)
	if err != nil {
		return Target{}, fmt.Errorf("target %q: %w", target, err)
	}
	t.Namespace = namespace
	quietClientGo()
	measure := func(ctx context.Context) (health.Observation, error) {
		r, err := kubewait.Look(ctx, config, t)
		switch {
		case err != nil:
			return health.Observation{}, err
		case !r.Ready:
			return health.Observation{}, errors.New(r.Message)
		}
		return health.Observation{Message: r.Message}, nil
	}
	watch := func(ctx context.Context, report func(health.Result, any)) error {
		_, err := kubewait.Watch(ctx, config, t, func(r kubewait.Result) {
			report(health.Result{Time: time.Now(), OK: r.Ready, Output: r.Message}, r)
		})
		return err
	}
	// Each run and each watch makes its requests and ends them: nothing is
	// kept between runs, so there is nothing to close.
	return Target{Prober: probe.New(kubeKind, t.String(), measure, nil), Watch: watch}, nil
}

var quiet sync.Once

// quietClientGo sends client-go's logs nowhere: its reflector logs every
// failed list and watch to standard error as it retries, which a wait
// reports in its own words instead, and a warning from the API server (a
// deprecated field) does not concern a wait. (Package kubewait leaves a Go
// program's logs as they are.)
func quietClientGo() {
	quiet.Do(func() { klog.SetLogger(logr.Discard()) })
}

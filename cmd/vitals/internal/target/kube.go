//go:build !vitals_probe

package target

import (
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kubewait"
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
  k8s://pods?selector=app%3Dweb          at least one pod matches, and every one is Ready`

// buildKube makes the Target of a k8s:// target: its Measure looks once (vitals
// probe), its Watch follows the objects until ready (vitals wait).
func buildKube(target string, o Options) (Target, error) {
	f := o.flagSet()
	var ko kube.Options
	for name, p := range map[string]*string{"kubeconfig": &ko.Kubeconfig, "context": &ko.Context, "namespace": &ko.Namespace} {
		*p, _ = f.GetString(name) // "" when the flag is not defined: the default
	}
	t, err := kubewait.New(target, ko)
	if err != nil {
		return Target{}, err
	}
	// Each run and each watch makes its requests and ends them: nothing is
	// kept between runs, so there is nothing to close.
	return Target{Prober: probe.New(kubeKind, t.String(), t.Measure, nil), Watch: t.Watch}, nil
}

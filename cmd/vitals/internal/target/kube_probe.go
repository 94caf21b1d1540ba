//go:build vitals_probe

package target

// The probe build has no k8s:// targets: they link client-go and the API's
// types (in the full build, about 14 MB more binary and 2 ms more at every
// start). It knows them, to say where they are (kube.go has them).

const KubeBuilt = false

// KubeHelp is the k8s:// line of the commands' help on targets.
const KubeHelp = `
  k8s://…                                Kubernetes objects: in the full build of vitals only`

func buildKube(target string, _ Options) (Target, error) {
	return Target{}, inFullBuild(target, kubeKind)
}

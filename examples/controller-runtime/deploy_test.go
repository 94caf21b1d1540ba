package main

// The Helm chart of deploy/helm and the kustomize component of
// deploy/kustomize, rendered by the real helm and kustomize (built by
// hack/kube-env.sh tools) and applied to the real API server as
// manifests_test.go applies deploy/examples.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vitals-dev/vitals/examples/controller-runtime/internal/exampletest"
	"github.com/vitals-dev/vitals/internal/kubeenv"
	"github.com/vitals-dev/vitals/internal/testenv"
)

const (
	chartDir     = "../../deploy/helm/vitals"
	chartValues  = "../../deploy/helm/examples" // example values files, *.yaml
	userChartDir = "../../deploy/helm/testdata/app"
	overlayDir   = "../../deploy/kustomize/testdata/overlay"
)

// kubeTool is the path of helm or kustomize, as hack/kube-env.sh tools
// builds them into the cache; a test without one ends as testenv.Missing
// says (under CI, a failure).
func kubeTool(t *testing.T, name string) string {
	t.Helper()
	script, err := kubeenv.Script()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", script, "tool", name).Output()
	if err != nil {
		t.Fatalf("bash %s tool %s: %v", script, name, err)
	}
	path := strings.TrimSpace(string(out))
	if _, err := os.Stat(path); err != nil {
		testenv.Missing(t, "%s is not built (%v): bash hack/kube-env.sh tools builds it", name, err)
	}
	return path
}

// runTool runs a program and returns its standard output; an error holds
// its standard error.
func runTool(program string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(program, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", filepath.Base(program), strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// mustRun is runTool for what must succeed.
func mustRun(t *testing.T, program string, args ...string) string {
	t.Helper()
	out, err := runTool(program, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// decodeObjects reads the objects of a multi-document YAML stream, as
// manifests named from and their place in it.
func decodeObjects(t *testing.T, from, yaml string) []manifest {
	t.Helper()
	dec := k8syaml.NewYAMLOrJSONDecoder(strings.NewReader(yaml), 4096)
	var all []manifest
	for doc := 1; ; doc++ {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: document %d: %v", from, doc, err)
		}
		if obj != nil {
			all = append(all, manifest{file: from, doc: doc, obj: &unstructured.Unstructured{Object: obj}})
		}
	}
	if len(all) == 0 {
		t.Fatalf("%s: no objects", from)
	}
	return all
}

// applier applies objects to the shared API server with a server-side
// apply, dry run (validation and admission run, nothing is stored), in a
// namespace of its own that enforces the restricted Pod Security Standard;
// each pod template is also created as a Pod, which the standard judges.
// An error or a warning of the API server fails the test.
type applier struct {
	t    *testing.T
	c    client.Client
	seen *warnings
	ns   string
}

func newApplier(t *testing.T, prefix string) *applier {
	t.Helper()
	cfg := exampletest.RestConfig(t)
	seen := &warnings{}
	cfg.WarningHandlerWithContext = seen
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := restrictedNamespace(t, c, prefix)
	seen.take()
	return &applier{t: t, c: c, seen: seen, ns: ns}
}

func (a *applier) apply(objects []manifest) {
	a.t.Helper()
	for _, m := range objects {
		namespaced, err := a.c.IsObjectNamespaced(m.obj)
		if err != nil {
			a.t.Errorf("%v: %v", m, err)
			continue
		}
		if namespaced && m.obj.GetNamespace() == "" {
			m.obj.SetNamespace(a.ns)
		}
		err = a.c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(m.obj),
			client.FieldOwner("vitals-test"), client.ForceOwnership, client.DryRunAll)
		if err != nil {
			a.t.Errorf("%v: the API server refuses it: %v", m, err)
		}
		a.warned(m)
		if pod := podOf(m); pod != nil {
			if err := a.c.Create(context.Background(), pod, client.DryRunAll); err != nil {
				a.t.Errorf("%v: the API server refuses it: %v", podFrom{m}, err)
			}
			a.warned(podFrom{m})
		}
	}
}

func (a *applier) warned(what fmt.Stringer) {
	a.t.Helper()
	if w := a.seen.take(); len(w) > 0 {
		a.t.Errorf("%v: the API server warns: %s", what, strings.Join(w, "; "))
	}
}

// podSpec is the pod template's spec of a manifest's object, or nil.
func podSpec(t *testing.T, m manifest) *corev1.PodSpec {
	t.Helper()
	pod := podOf(m)
	if pod == nil {
		return nil
	}
	var spec corev1.PodSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(pod.Object["spec"].(map[string]any), &spec); err != nil {
		t.Fatalf("%v: %v", m, err)
	}
	return &spec
}

// container is the container or init container of a pod spec named name.
func container(spec *corev1.PodSpec, init bool, name string) *corev1.Container {
	list := spec.Containers
	if init {
		list = spec.InitContainers
	}
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

// haveResources fails t for each container of a pod spec without cpu and
// memory requests and limits.
func haveResources(t *testing.T, what fmt.Stringer, spec *corev1.PodSpec) {
	t.Helper()
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		for _, list := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
			if list.Cpu().IsZero() || list.Memory().IsZero() {
				t.Errorf("%v: container %s has no cpu and memory requests and limits: %v", what, c.Name, c.Resources)
				break
			}
		}
	}
}

// valuesFiles are the chart's example values files, each a -f.
func valuesFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartValues, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example values in %s: %v", chartValues, err)
	}
	return files
}

// The chart passes helm lint --strict (warnings are failures) with its
// defaults and with each example values file.
func TestChartLints(t *testing.T) {
	helm := kubeTool(t, "helm")
	mustRun(t, helm, "lint", "--strict", chartDir)
	for _, f := range valuesFiles(t) {
		mustRun(t, helm, "lint", "--strict", chartDir, "-f", f)
	}
}

// helm template renders vitals fleet's Deployment, Service, ServiceAccount
// and RBAC, with the defaults and with each example values file, and the
// API server accepts each object; the fleet watches the namespaces its RBAC
// lets it read, and every container has requests and limits.
func TestChartIsAcceptedByTheAPIServer(t *testing.T) {
	helm := kubeTool(t, "helm")
	for _, values := range append([]string{""}, valuesFiles(t)...) {
		name := "defaults"
		if values != "" {
			name = filepath.Base(values)
		}
		t.Run(name, func(t *testing.T) {
			a := newApplier(t, "chart-test")
			args := []string{"template", "vitals", chartDir, "--namespace", a.ns}
			if values != "" {
				args = append(args, "-f", values)
			}
			objects := decodeObjects(t, "helm template "+name, mustRun(t, helm, args...))
			kinds := map[string]bool{}
			var scope []string
			for _, m := range objects {
				kinds[m.obj.GetKind()] = true
				if spec := podSpec(t, m); spec != nil {
					haveResources(t, m, spec)
					fleet := container(spec, false, "fleet")
					if fleet == nil {
						t.Fatalf("%v: no container fleet", m)
					}
					// vitals fleet's --condition is one type: the one that
					// decides a pod's checks pass.
					if i := slices.Index(fleet.Args, "--condition"); i < 0 || i+1 >= len(fleet.Args) || fleet.Args[i+1] != "vitals.dev/ready" ||
						slices.Contains(fleet.Args[i+1:], "--condition") {
						t.Errorf("helm template %s: vitals fleet %q: want one --condition vitals.dev/ready", name, fleet.Args)
					}
					for _, probe := range []*corev1.Probe{fleet.LivenessProbe, fleet.ReadinessProbe} {
						if probe == nil || probe.HTTPGet == nil || (probe.HTTPGet.Path != "/livez" && probe.HTTPGet.Path != "/readyz") {
							t.Errorf("helm template %s: a probe of the fleet %+v: want GET /livez or /readyz, which answer the kubelet", name, probe)
						}
					}
					if i := slices.Index(fleet.Args, "-n"); i >= 0 && i+1 < len(fleet.Args) {
						scope = fleet.Args[i : i+2]
					} else if slices.Contains(fleet.Args, "-A") {
						scope = []string{"-A"}
					}
				}
			}
			want := []string{"Deployment", "Service", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"}
			wantScope := []string{"-A"}
			if kinds["Role"] {
				want = []string{"Deployment", "Service", "ServiceAccount", "Role", "RoleBinding"}
				wantScope = []string{"-n", a.ns}
			}
			for _, k := range want {
				if !kinds[k] {
					t.Errorf("helm template %s renders no %s (it renders %v)", name, k, kinds)
				}
			}
			if !slices.Equal(scope, wantScope) {
				t.Errorf("helm template %s: vitals fleet watches %q, want %q, as its RBAC allows", name, scope, wantScope)
			}
			a.apply(objects)
		})
	}
}

// values.schema.json refuses a value of the wrong type, one outside its
// choices, and a key the chart does not have, naming where.
func TestChartSchemaRefusesBadValues(t *testing.T) {
	helm := kubeTool(t, "helm")
	for _, tc := range []struct{ set, want string }{
		{"replicaCount=abc", "at '/replicaCount': got string, want integer"},
		{"fleet.scope=everywhere", "at '/fleet/scope': value must be one of 'cluster', 'namespace'"},
		{"fleet.port=70000", "at '/fleet/port'"},
		{"image.pullPolicy=Sometimes", "at '/image/pullPolicy'"},
		{"replicas=2", "additional properties 'replicas' not allowed"},
	} {
		_, err := runTool(helm, "template", "vitals", chartDir, "--set", tc.set)
		if err == nil || !strings.Contains(err.Error(), "values don't meet the specifications of the schema") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("helm template --set %s: %v, want the schema to refuse it: %s", tc.set, err, tc.want)
		}
	}
}

// A user's chart that depends on the vitals chart (by a file:// path, as
// helm dependency build takes it) puts vitals beside its workload with
// vitals.sidecar: as a native sidecar, an init container with
// restartPolicy: Always and a startupProbe, and as a classic one, a
// container without either. The API server accepts both.
func TestSidecarTemplateRendersBothForms(t *testing.T) {
	helm := kubeTool(t, "helm")
	// helm dependency build writes the dependency into the chart's charts/:
	// it runs on a copy, the file:// path kept relative.
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "helm"), os.DirFS("../../deploy/helm")); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(root, "helm", "testdata", "app")
	mustRun(t, helm, "dependency", "build", app)
	mustRun(t, helm, "lint", "--strict", app)
	a := newApplier(t, "sidecar-test")
	objects := decodeObjects(t, "helm template "+userChartDir, mustRun(t, helm, "template", "app", app, "--namespace", a.ns))
	forms := map[string]*corev1.PodSpec{}
	for _, m := range objects {
		if m.obj.GetKind() == "Deployment" {
			forms[m.obj.GetName()] = podSpec(t, m)
			haveResources(t, m, forms[m.obj.GetName()])
		} else if m.obj.GetKind() != "ConfigMap" {
			t.Errorf("%v: the chart renders it, and vitals.fleet.enabled is false", m)
		}
	}
	always := corev1.ContainerRestartPolicyAlways
	if spec := forms["app-native"]; spec == nil {
		t.Errorf("no Deployment app-native")
	} else if c := container(spec, true, "vitals"); c == nil || c.RestartPolicy == nil || *c.RestartPolicy != always || c.StartupProbe == nil || container(spec, false, "vitals") != nil {
		t.Errorf("app-native: vitals is %+v in the init containers, want a native sidecar: restartPolicy: Always and a startupProbe", c)
	}
	if spec := forms["app-classic"]; spec == nil {
		t.Errorf("no Deployment app-classic")
	} else if c := container(spec, false, "vitals"); c == nil || c.RestartPolicy != nil || c.StartupProbe != nil || len(spec.InitContainers) > 0 {
		t.Errorf("app-classic: vitals is %+v in the containers, want a classic sidecar: no restartPolicy, no startupProbe, no init container", c)
	}
	a.apply(objects)
	if _, err := runTool(helm, "template", "app", app, "--set", "sidecar.image="); err == nil || !strings.Contains(err.Error(), "vitals.sidecar: image is required") {
		t.Errorf("vitals.sidecar without an image: %v, want it refused", err)
	}
}

// kustomize build of an overlay with the sidecar component adds vitals to
// its Deployment as a native sidecar that reads the overlay's generated
// ConfigMap (by its name with the hash suffix), and the API server accepts
// what it builds.
func TestKustomizeSidecarIsAcceptedByTheAPIServer(t *testing.T) {
	kustomize := kubeTool(t, "kustomize")
	objects := decodeObjects(t, "kustomize build "+overlayDir, mustRun(t, kustomize, "build", overlayDir))
	var configMap string
	var spec *corev1.PodSpec
	for _, m := range objects {
		switch m.obj.GetKind() {
		case "ConfigMap":
			configMap = m.obj.GetName()
		case "Deployment":
			spec = podSpec(t, m)
			haveResources(t, m, spec)
		}
	}
	if spec == nil {
		t.Fatal("kustomize build renders no Deployment")
	}
	if c := container(spec, true, "vitals"); c == nil || c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("the Deployment's init containers have no native sidecar vitals: %+v", spec.InitContainers)
	}
	if container(spec, false, "web") == nil {
		t.Errorf("the Deployment lost its own container web: %+v", spec.Containers)
	}
	mounted := ""
	for _, v := range spec.Volumes {
		if v.Name == "vitals-config" && v.ConfigMap != nil {
			mounted = v.ConfigMap.Name
		}
	}
	if !strings.HasPrefix(configMap, "vitals-") || mounted != configMap {
		t.Errorf("the sidecar mounts ConfigMap %q, want the generated %q", mounted, configMap)
	}
	newApplier(t, "kustomize-test").apply(objects)
}

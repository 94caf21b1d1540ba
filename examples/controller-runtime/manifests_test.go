package main

// The manifests of deploy/examples, tested against a real API server: this
// module has the Kubernetes client already, and cmd/vitals (the other module
// that has one) is the agent's own.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vitals-dev/vitals/examples/controller-runtime/internal/exampletest"
)

// manifestDir is deploy/examples, from this package's directory.
const manifestDir = "../../deploy/examples"

// manifestFiles are the files the tests expect there; a new file is
// tested once it is added here.
var manifestFiles = []string{"entrypoint.yaml", "sidecar.yaml", "readiness-gate.yaml", "grpc-probe.yaml", "controller-metrics.yaml"}

// manifest is one object of a file in deploy/examples.
type manifest struct {
	file string // its base name
	doc  int    // its place in the file, from 1
	obj  *unstructured.Unstructured
}

func (m manifest) String() string {
	return fmt.Sprintf("%s#%d %s %s", m.file, m.doc, m.obj.GetKind(), m.obj.GetName())
}

// readManifests reads every object of every file in deploy/examples.
func readManifests(t *testing.T) []manifest {
	t.Helper()
	on, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(on) != len(manifestFiles) {
		t.Fatalf("%s holds %d files, want the %d tested here (%s): add a new one to manifestFiles", manifestDir, len(on), len(manifestFiles), strings.Join(manifestFiles, ", "))
	}
	var all []manifest
	for _, name := range manifestFiles {
		f, err := os.Open(filepath.Join(manifestDir, name))
		if err != nil {
			t.Fatal(err)
		}
		dec := k8syaml.NewYAMLOrJSONDecoder(f, 4096)
		objects := 0
		for doc := 1; ; doc++ {
			var obj map[string]any
			err := dec.Decode(&obj)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: document %d: %v", name, doc, err)
			}
			if obj == nil {
				continue // an empty document
			}
			all = append(all, manifest{file: name, doc: doc, obj: &unstructured.Unstructured{Object: obj}})
			objects++
		}
		f.Close()
		if objects == 0 {
			t.Fatalf("%s: no objects", name)
		}
	}
	return all
}

// warnings collects the API server's warnings for the requests of a client.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

// take returns the warnings since the last take.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := w.seen
	w.seen = nil
	return seen
}

// Every object of every example manifest is one the API server of
// Kubernetes 1.37 accepts as it is, in a namespace that enforces the
// restricted Pod Security Standard: created with a server-side dry run
// (admission and validation run, nothing is stored), unknown fields being
// errors and any warning a failure. The standard is enforced on pods and
// only warned of on the objects that make them, so each pod template is also
// created as a pod. Objects without a namespace go into one the test
// creates, as `kubectl apply -n` would put them.
func TestManifestsAreAcceptedByTheAPIServer(t *testing.T) {
	cfg := exampletest.RestConfig(t)
	seen := &warnings{}
	cfg.WarningHandlerWithContext = seen
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := restrictedNamespace(t, c, "manifests-test")
	// The standard is in force there: a pod that says nothing of its
	// security is refused.
	bare := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "bare", Image: "busybox"}}},
	}
	if err := c.Create(context.Background(), bare, client.DryRunAll); err == nil || !strings.Contains(err.Error(), `violates PodSecurity "restricted`) {
		t.Fatalf("a pod with no securityContext in namespace %s: %v, want it refused for the restricted Pod Security Standard", ns, err)
	}
	seen.take()
	create := func(what fmt.Stringer, obj *unstructured.Unstructured) {
		t.Helper()
		if err := c.Create(context.Background(), obj, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
			t.Errorf("%v: the API server refuses it: %v", what, err)
		}
		if w := seen.take(); len(w) > 0 {
			t.Errorf("%v: the API server warns: %s", what, strings.Join(w, "; "))
		}
	}
	for _, m := range readManifests(t) {
		namespaced, err := c.IsObjectNamespaced(m.obj)
		if err != nil {
			t.Errorf("%v: %v", m, err)
			continue
		}
		if namespaced && m.obj.GetNamespace() == "" {
			m.obj.SetNamespace(ns)
		} else if namespaced {
			ensureNamespace(t, c, m.obj.GetNamespace())
		}
		create(m, m.obj)
		if pod := podOf(m); pod != nil {
			create(podFrom{m}, pod)
		}
	}
}

// podFrom names the pod made of a manifest's pod template.
type podFrom struct{ manifest }

func (p podFrom) String() string { return p.manifest.String() + "'s pod template, as a Pod" }

// podOf is a Pod of the pod template of a manifest's object (a Deployment's,
// a Job's...), in its namespace, or nil if it has none.
func podOf(m manifest) *unstructured.Unstructured {
	template, ok, _ := unstructured.NestedMap(m.obj.Object, "spec", "template")
	if !ok {
		return nil
	}
	spec, ok, _ := unstructured.NestedMap(template, "spec")
	if !ok {
		return nil
	}
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": spec}}
	pod.SetName(m.obj.GetName())
	pod.SetNamespace(m.obj.GetNamespace())
	if labels, ok, _ := unstructured.NestedStringMap(template, "metadata", "labels"); ok {
		pod.SetLabels(labels)
	}
	return pod
}

// restrictedNamespace creates a namespace named prefix-RANDOM that enforces
// the restricted Pod Security Standard (refusing pods that do not meet it)
// and warns of it (of the objects that make pods), and returns its name.
func restrictedNamespace(t *testing.T, c client.Client, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: restricted}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating a namespace %s-…: %v", prefix, err)
	}
	t.Cleanup(func() { c.Delete(context.Background(), ns) })
	return ns.Name
}

// restricted are the labels of a namespace that enforces the restricted Pod
// Security Standard, of the latest version, and warns of it.
var restricted = map[string]string{
	"pod-security.kubernetes.io/enforce": "restricted",
	"pod-security.kubernetes.io/warn":    "restricted",
}

// ensureNamespace creates a namespace a manifest names, for real, unless
// it exists; as the test's own, it enforces the restricted standard.
func ensureNamespace(t *testing.T, c client.Client, name string) {
	t.Helper()
	err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: restricted}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s, which a manifest names: %v", name, err)
	}
}

// vitalsImage is the name of vitals's image, which hack/image.sh and the
// Dockerfile build, without its tag.
const vitalsImage = "ghcr.io/vitals-dev/vitals"

// Every container of the manifests' pods runs as the vitals image's user,
// 65532, on a read-only root file system, and each that runs `vitals run`
// has a writable emptyDir where vitals puts its management socket: the
// directory of the file's api:, or without one the user's own (the temp
// directory's vitals-65532, or $XDG_RUNTIME_DIR's). A vitals sidecar is the
// vitals image, whose entrypoint is vitals.
func TestManifestPodsRunAsNonRootOnAReadOnlyRoot(t *testing.T) {
	configs := map[string]string{} // each file's vitals.yaml
	type pod struct {
		m    manifest
		spec corev1.PodSpec
	}
	var pods []pod
	for _, m := range readManifests(t) {
		if m.obj.GetKind() == "ConfigMap" {
			configs[m.file], _, _ = unstructured.NestedString(m.obj.Object, "data", "vitals.yaml")
		}
		if p := podOf(m); p != nil {
			var spec corev1.PodSpec
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(p.Object["spec"].(map[string]any), &spec); err != nil {
				t.Fatalf("%v: %v", m, err)
			}
			pods = append(pods, pod{m, spec})
		}
	}
	fromImage := 0
	for _, p := range pods {
		for _, c := range append(slices.Clone(p.spec.InitContainers), p.spec.Containers...) {
			where := fmt.Sprintf("%v: container %s", p.m, c.Name)
			user, group := p.spec.SecurityContext.RunAsUser, p.spec.SecurityContext.RunAsGroup
			if sc := c.SecurityContext; sc != nil && sc.RunAsUser != nil {
				user = sc.RunAsUser
			}
			if sc := c.SecurityContext; sc != nil && sc.RunAsGroup != nil {
				group = sc.RunAsGroup
			}
			if user == nil || *user != 65532 || group == nil || *group != 65532 {
				t.Errorf("%s does not run as 65532:65532, the vitals image's user", where)
			}
			if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				t.Errorf("%s has no securityContext.readOnlyRootFilesystem: true", where)
			}
			image := strings.HasPrefix(c.Image, vitalsImage+":")
			if image {
				fromImage++
				if len(c.Command) > 0 {
					t.Errorf("%s replaces the vitals image's entrypoint with %q: give vitals's arguments as args", where, c.Command)
				}
			}
			runs := image || len(c.Command) > 0 && path.Base(c.Command[0]) == "vitals"
			if !runs || !slices.Contains(append(slices.Clone(c.Command), c.Args...), "run") {
				continue
			}
			dir, err := socketDir(configs[p.m.file], c.Env)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if dir != "" && !emptyDirAt(p.spec, c, dir) {
				t.Errorf("%s runs vitals run, whose socket goes in %s, and has no writable emptyDir there", where, dir)
			}
		}
	}
	if fromImage == 0 {
		t.Errorf("no container of the manifests is the vitals image, %s", vitalsImage)
	}
}

// Every container of the manifests' pods asks for cpu and memory and has a
// limit of each, and a pod whose containers never talk to the API server
// (it names no ServiceAccount of its own) has no token mounted.
func TestManifestPodsHaveResourcesAndATokenOnlyWhereNeeded(t *testing.T) {
	for _, m := range readManifests(t) {
		spec := podSpec(t, m)
		if spec == nil {
			continue
		}
		haveResources(t, m, spec)
		mounted := spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken
		if spec.ServiceAccountName == "" && mounted {
			t.Errorf("%v: no ServiceAccount of its own, and its token mounted: automountServiceAccountToken: false", m)
		}
		if spec.ServiceAccountName != "" && !mounted {
			t.Errorf("%v: ServiceAccount %s, and no token to act as it", m, spec.ServiceAccountName)
		}
	}
}

// socketDir is the directory where vitals run, as a user other than root
// with the environment env, makes the socket of config's management API, or
// "" when it makes none there (a TCP API).
func socketDir(config string, env []corev1.EnvVar) (string, error) {
	var c struct {
		API string `json:"api"`
	}
	if err := k8syaml.Unmarshal([]byte(config), &c); err != nil {
		return "", fmt.Errorf("its vitals.yaml: %w", err)
	}
	switch {
	case strings.HasPrefix(c.API, "tcp://"):
		return "", nil
	case c.API != "":
		return path.Dir(c.API), nil
	}
	vars := map[string]string{}
	for _, e := range env {
		vars[e.Name] = e.Value
	}
	if x := vars["XDG_RUNTIME_DIR"]; x != "" {
		return x, nil
	}
	if tmp := vars["TMPDIR"]; tmp != "" {
		return tmp, nil
	}
	return "/tmp", nil
}

// emptyDirAt says whether container c of the pod spec mounts an emptyDir,
// writable, at dir or above it.
func emptyDirAt(spec corev1.PodSpec, c corev1.Container, dir string) bool {
	for _, m := range c.VolumeMounts {
		if m.ReadOnly || (dir != m.MountPath && !strings.HasPrefix(dir, strings.TrimSuffix(m.MountPath, "/")+"/")) {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.EmptyDir != nil {
				return true
			}
		}
	}
	return false
}

// access is a request a ServiceAccount may make, or may not, in its
// namespace: a verb on a resource of an API group ("": the core group), or
// on a subresource of it.
type access struct{ verb, group, resource, sub string }

// String writes it as kubectl auth can-i takes it: patch pods/status, get
// leases.coordination.k8s.io.
func (a access) String() string {
	s := a.verb + " " + a.resource
	if a.group != "" {
		s += "." + a.group
	}
	if a.sub != "" {
		s += "/" + a.sub
	}
	return s
}

// The Role of each manifest that has one grants its ServiceAccount what its
// pod needs, and not more: created for real, the API server's own
// authorizer answers for it. readiness-gate.yaml's is vitals's, to write the
// pod's condition and Events; controller-metrics.yaml's is the manager's,
// to reconcile ConfigMaps and elect a leader.
func TestRolesGrantWhatTheirPodsNeed(t *testing.T) {
	for _, tc := range []struct {
		file             string
		allowed, refused []access
	}{{
		file:    "readiness-gate.yaml",
		allowed: []access{{"get", "", "pods", ""}, {"patch", "", "pods", "status"}, {"create", "", "events", ""}, {"patch", "", "events", ""}},
		refused: []access{{"list", "", "pods", ""}, {"patch", "", "pods", ""}, {"delete", "", "pods", ""}, {"update", "", "pods", "status"}, {"get", "", "secrets", ""}},
	}, {
		file: "controller-metrics.yaml",
		allowed: []access{{"get", "", "configmaps", ""}, {"list", "", "configmaps", ""}, {"watch", "", "configmaps", ""},
			{"get", "coordination.k8s.io", "leases", ""}, {"create", "coordination.k8s.io", "leases", ""}, {"update", "coordination.k8s.io", "leases", ""},
			{"create", "", "events", ""}, {"patch", "", "events", ""}},
		refused: []access{{"update", "", "configmaps", ""}, {"delete", "", "configmaps", ""}, {"get", "", "secrets", ""},
			{"delete", "coordination.k8s.io", "leases", ""}, {"get", "", "pods", ""}},
	}} {
		t.Run(tc.file, func(t *testing.T) {
			c, err := client.New(exampletest.RestConfig(t), client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ns := exampletest.CreateNamespace(t, c, "rbac-test")
			var account string
			for _, m := range readManifests(t) {
				if m.file != tc.file {
					continue
				}
				switch m.obj.GetKind() {
				case "ServiceAccount":
					account = m.obj.GetName()
				case "Role", "RoleBinding":
				default:
					continue
				}
				m.obj.SetNamespace(ns)
				if err := c.Create(context.Background(), m.obj); err != nil {
					t.Fatalf("%v: %v", m, err)
				}
			}
			if account == "" {
				t.Fatalf("%s has no ServiceAccount", tc.file)
			}
			user := "system:serviceaccount:" + ns + ":" + account
			groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
			allowed := func(a access) (bool, error) {
				sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
					User: user, Groups: groups,
					ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.sub},
				}}
				if err := c.Create(context.Background(), sar); err != nil {
					return false, err
				}
				return sar.Status.Allowed, nil
			}
			for _, want := range tc.allowed {
				// The authorizer learns of new roles through a watch: allow it a moment.
				deadline := time.Now().Add(30 * time.Second)
				for {
					ok, err := allowed(want)
					if err != nil {
						t.Fatal(err)
					}
					if ok {
						break
					}
					if time.Now().After(deadline) {
						t.Errorf("%s may not %v in its namespace", user, want)
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
			for _, not := range tc.refused {
				if ok, err := allowed(not); err != nil {
					t.Fatal(err)
				} else if ok {
					t.Errorf("%s may %v: more than its pod needs", user, not)
				}
			}
		})
	}
}

// controller-metrics.yaml's ConfigMap holds the recipe of
// examples/controller-runtime/metrics as it is, which that example's tests
// run against a manager.
func TestControllerMetricsHoldsTheRecipe(t *testing.T) {
	recipe, err := os.ReadFile("metrics/vitals.yaml")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range readManifests(t) {
		if m.file != "controller-metrics.yaml" || m.obj.GetKind() != "ConfigMap" {
			continue
		}
		found = true
		if data, _, _ := unstructured.NestedString(m.obj.Object, "data", "vitals.yaml"); data != string(recipe) {
			t.Errorf("%v: its vitals.yaml is not metrics/vitals.yaml as it is; indent that by 4 spaces under vitals.yaml: |", m)
		}
	}
	if !found {
		t.Error("controller-metrics.yaml has no ConfigMap")
	}
}

// The vitals.yaml in every ConfigMap of the manifests is one that the real
// `vitals validate` accepts, from a vitals built from this workspace.
func TestManifestConfigsValidate(t *testing.T) {
	var configs []manifest
	for _, m := range readManifests(t) {
		if m.obj.GetKind() != "ConfigMap" {
			continue
		}
		var cm corev1.ConfigMap
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.obj.Object, &cm); err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		if _, ok := cm.Data["vitals.yaml"]; ok {
			configs = append(configs, m)
		}
	}
	if len(configs) != len(manifestFiles) {
		t.Fatalf("found %d ConfigMaps with a vitals.yaml, want one in each of %d files", len(configs), len(manifestFiles))
	}
	vitals := exampletest.BuildVitals(t)
	dir := t.TempDir()
	for _, m := range configs {
		t.Run(m.file, func(t *testing.T) {
			data, _, _ := unstructured.NestedString(m.obj.Object, "data", "vitals.yaml")
			path := filepath.Join(dir, strings.TrimSuffix(m.file, ".yaml")+"-vitals.yaml")
			if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(vitals, "validate", "-c", path).CombinedOutput()
			if err != nil {
				t.Errorf("%v: vitals validate: %v\n%s", m, err, out)
			}
		})
	}
}

// The probes of each vitals sidecar (a restartable init container running
// `vitals run`) ask what their comments say, of the real vitals run with the
// file's own vitals.yaml and no app beside it: the sidecar's livenessProbe
// keeps passing, since vitals itself is fine and restarting it would not bring
// the app back, while its readinessProbe and the app's livenessProbe on the
// sidecar fail once the checks have failed. Every sidecar must have both
// probes of its own.
func TestSidecarProbesWithTheAppDown(t *testing.T) {
	byFile := map[string][]manifest{}
	for _, m := range readManifests(t) {
		byFile[m.file] = append(byFile[m.file], m)
	}
	type sidecar struct {
		file, config string   // the vitals.yaml
		live, ready  string   // the sidecar's probes' paths
		appLive      []string // the paths of the app containers' livenessProbes on the sidecar's port
	}
	var sidecars []sidecar
	for _, file := range manifestFiles {
		var config string
		var deployments []appsv1.Deployment
		for _, m := range byFile[file] {
			switch m.obj.GetKind() {
			case "ConfigMap":
				config, _, _ = unstructured.NestedString(m.obj.Object, "data", "vitals.yaml")
			case "Deployment":
				var d appsv1.Deployment
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.obj.Object, &d); err != nil {
					t.Fatalf("%v: %v", m, err)
				}
				deployments = append(deployments, d)
			}
		}
		for _, d := range deployments {
			pod := d.Spec.Template.Spec
			for _, c := range pod.InitContainers {
				if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways || !slices.Contains(append(slices.Clone(c.Command), c.Args...), "run") {
					continue
				}
				s := sidecar{file: file, config: config}
				port := func(p intstr.IntOrString) bool { // whether p is the sidecar's vitals port
					for _, cp := range c.Ports {
						if cp.ContainerPort == 8558 && (p.IntValue() == 8558 || p.String() == cp.Name) {
							return true
						}
					}
					return false
				}
				for _, p := range []struct {
					what  string
					probe *corev1.Probe
					path  *string
				}{{"livenessProbe", c.LivenessProbe, &s.live}, {"readinessProbe", c.ReadinessProbe, &s.ready}} {
					if p.probe == nil || p.probe.HTTPGet == nil || !port(p.probe.HTTPGet.Port) {
						t.Errorf("%s: the vitals sidecar %s has no %s of its own (an httpGet on its port 8558)", file, c.Name, p.what)
						continue
					}
					*p.path = p.probe.HTTPGet.Path
				}
				for _, app := range pod.Containers {
					if p := app.LivenessProbe; p != nil && p.HTTPGet != nil && p.HTTPGet.Port.IntValue() == 8558 {
						s.appLive = append(s.appLive, p.HTTPGet.Path)
					}
				}
				if s.live != "" && s.ready != "" {
					sidecars = append(sidecars, s)
				}
			}
		}
	}
	if t.Failed() {
		return
	}
	if len(sidecars) == 0 {
		t.Fatal("no vitals sidecar in the manifests")
	}
	vitals := exampletest.BuildVitals(t)
	for _, s := range sidecars {
		t.Run(s.file, func(t *testing.T) {
			t.Parallel()
			base := exampletest.RunVitals(t, vitals, s.config)
			// The live and ready checks fail after their failure threshold
			// (3 x 5s); the sidecar's livenessProbe passes all along.
			deadline := time.Now().Add(60 * time.Second)
			for {
				if code, body := exampletest.Get(base + s.live); code != http.StatusOK {
					t.Fatalf("the sidecar's livenessProbe, GET %s, with the app down: %d %q, want 200: the kubelet would restart vitals", s.live, code, body)
				}
				failed := true
				for _, path := range append([]string{s.ready}, s.appLive...) {
					if code, _ := exampletest.Get(base + path); code != http.StatusServiceUnavailable {
						failed = false
					}
				}
				if failed {
					break
				}
				if time.Now().After(deadline) {
					code, body := exampletest.Get(base + s.ready + "?verbose")
					t.Fatalf("with the app down, the sidecar's readinessProbe (%s) and the app's livenessProbe (%v) did not all fail within 60s; %s: %d %q (does something answer where its checks look?)",
						s.ready, s.appLive, s.ready, code, body)
				}
				time.Sleep(200 * time.Millisecond)
			}
			if len(s.appLive) == 0 {
				t.Errorf("no app container's livenessProbe asks the sidecar")
			}
		})
	}
}

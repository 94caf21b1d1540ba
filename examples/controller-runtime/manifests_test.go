package main

// The manifests of deploy/examples, tested against a real API server: this
// module has the Kubernetes client already, and cmd/vitals (the other module
// that has one) is the agent's own.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// manifestDir is deploy/examples, from this package's directory.
const manifestDir = "../../deploy/examples"

// manifestFiles are the files the tests expect there; a new file is
// tested once it is added here.
var manifestFiles = []string{"entrypoint.yaml", "sidecar.yaml", "readiness-gate.yaml", "grpc-probe.yaml"}

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
// Kubernetes 1.37 accepts as it is: created with a server-side dry run
// (admission and validation run, nothing is stored), unknown fields being
// errors and any warning a failure. Objects without a namespace go into one
// the test creates, as `kubectl apply -n` would put them.
func TestManifestsAreAcceptedByTheAPIServer(t *testing.T) {
	cfg := restConfig(t)
	seen := &warnings{}
	cfg.WarningHandlerWithContext = seen
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := createNamespace(t, c, "manifests-test")
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
		if err := c.Create(context.Background(), m.obj, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
			t.Errorf("%v: the API server refuses it: %v", m, err)
		}
		if w := seen.take(); len(w) > 0 {
			t.Errorf("%v: the API server warns: %s", m, strings.Join(w, "; "))
		}
	}
}

// ensureNamespace creates a namespace a manifest names, for real, unless
// it exists.
func ensureNamespace(t *testing.T, c client.Client, name string) {
	t.Helper()
	err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s, which a manifest names: %v", name, err)
	}
}

// The Role of readiness-gate.yaml grants its ServiceAccount what vitals
// needs to write the pod's condition and Events, and not more: created for
// real, the API server's own authorizer answers for it.
func TestReadinessGateRoleGrantsWhatVitalsNeeds(t *testing.T) {
	c, err := client.New(restConfig(t), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := createNamespace(t, c, "rbac-test")
	var account string
	for _, m := range readManifests(t) {
		if m.file != "readiness-gate.yaml" {
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
		t.Fatal("readiness-gate.yaml has no ServiceAccount")
	}
	user := "system:serviceaccount:" + ns + ":" + account
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	allowed := func(verb, resource, sub string) (bool, error) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Resource: resource, Subresource: sub},
		}}
		if err := c.Create(context.Background(), sar); err != nil {
			return false, err
		}
		return sar.Status.Allowed, nil
	}
	for _, want := range []struct{ verb, resource, sub string }{
		{"get", "pods", ""}, {"patch", "pods", "status"}, {"create", "events", ""}, {"patch", "events", ""},
	} {
		// The authorizer learns of new roles through a watch: allow it a moment.
		deadline := time.Now().Add(30 * time.Second)
		for {
			ok, err := allowed(want.verb, want.resource, want.sub)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s may not %s %s %s in its namespace", user, want.verb, want.resource, want.sub)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, not := range []struct{ verb, resource, sub string }{
		{"list", "pods", ""}, {"patch", "pods", ""}, {"delete", "pods", ""}, {"update", "pods", "status"}, {"get", "secrets", ""},
	} {
		if ok, err := allowed(not.verb, not.resource, not.sub); err != nil {
			t.Fatal(err)
		} else if ok {
			t.Errorf("%s may %s %s %s: more than vitals needs", user, not.verb, not.resource, not.sub)
		}
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
	vitals := buildVitals(t)
	dir := t.TempDir()
	for _, m := range configs {
		t.Run(m.file, func(t *testing.T) {
			data, _, _ := unstructured.NestedString(m.obj.Object, "data", "vitals.yaml")
			path := filepath.Join(dir, strings.TrimSuffix(m.file, ".yaml")+"-vitals.yaml")
			if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(vitals, "validate", "-c", path).CombinedOutput()
			if err != nil && strings.Contains(string(out), `unknown field "kubernetes"`) {
				t.Skipf("%v: this vitals has no kubernetes: section in its configuration yet:\n%s", m, out)
			}
			if err != nil {
				t.Errorf("%v: vitals validate: %v\n%s", m, err, out)
			}
		})
	}
}

// buildVitals builds the vitals of this workspace into a temporary
// directory. Outside a workspace that holds cmd/vitals (GOWORK=off) this
// module cannot build it, and the test is skipped.
func buildVitals(t *testing.T) string {
	t.Helper()
	const pkg = "github.com/vitals-dev/vitals/cmd/vitals"
	if out, err := exec.Command("go", "list", "-m", pkg).CombinedOutput(); err != nil {
		t.Skipf("cannot build %s from here (run the test in the repository's go.work): %s", pkg, out)
	}
	bin := filepath.Join(t.TempDir(), "vitals")
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

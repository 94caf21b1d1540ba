//go:build !vitals_probe

package target

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kubeconfig writes a kubeconfig whose current context works in namespace
// shop, with a second context "other" in namespace dev. Building a k8s://
// target reads it and makes no request.
func kubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: main
  context: {cluster: c, user: u, namespace: shop}
- name: other
  context: {cluster: c, user: u, namespace: dev}
current-context: main
`), 0o600)
	return path
}

func TestTheFullBuildHasK8sTargets(t *testing.T) {
	if kind, err := KindOf("k8s://deployment/api"); err != nil || kind != "k8s" {
		t.Fatalf("KindOf: %q, %v", kind, err)
	}
	for in, want := range map[string]string{
		"ftp://x/":   "use http, https, tcp, tls, file, dns, grpc, grpcs, metrics+http, metrics+https, connection, listening, postgres, postgresql, redis, rediss, amqp, amqps, nats or k8s (or -- COMMAND for exec)",
		"/etc/hosts": "use http://, https://, tcp://, tls://, file://, dns://, grpc://, grpcs://, metrics+http://, metrics+https://, connection://, listening://, postgres://, postgresql://, redis://, rediss://, amqp://, amqps://, nats://, k8s://, or -- COMMAND for exec",
	} {
		if _, err := KindOf(in); err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("KindOf(%q): %v, want …%q", in, err, want)
		}
	}
	config := kubeconfig(t)
	t.Setenv("KUBECONFIG", config)
	for _, tt := range []struct {
		target string
		args   []string
		want   string
	}{
		{"k8s://deploy/api", nil, "k8s deployment/api -n shop"},
		{"k8s://deploy/api", []string{"-n", "prod"}, "k8s deployment/api -n prod"},
		{"k8s://pods?selector=app%3Dapi", []string{"--context", "other"}, "k8s pods -l app=api -n dev"},
		{"k8s://job/migrate", []string{"--kubeconfig", config, "--context", "other", "-n", "ci"}, "k8s job/migrate -n ci"},
	} {
		p, err := Build(tt.target, options(t, tt.args...))
		if err != nil {
			t.Errorf("Build(%q, %+v): %v", tt.target, tt.args, err)
			continue
		}
		if p.String() != tt.want || p.Kind() != "k8s" {
			t.Errorf("Build(%q, %+v) = %s %q, want k8s %q", tt.target, tt.args, p.Kind(), p, tt.want)
		}
		if p.Watch == nil {
			t.Errorf("Build(%q): not watched, a k8s:// target is followed through the API server's watch", tt.target)
		}
	}
	for _, tt := range []struct {
		target string
		args   []string
		want   string
	}{
		{"k8s://deploymnt/api", nil, `unknown kind "deploymnt"`},
		{"k8s://deploy/api", []string{"--namespace", "Shop_1"}, `--namespace "Shop_1": a lowercase RFC 1123 label`},
		{"k8s://deploy/api", []string{"--context", "nope"}, `context "nope" does not exist`},
		{"k8s://deploy/api", []string{"--kubeconfig", filepath.Join(t.TempDir(), "none")}, "none: no such file or directory"},
	} {
		if _, err := Build(tt.target, options(t, tt.args...)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Build(%q, %+v): %v, want an error with %q", tt.target, tt.args, err, tt.want)
		}
	}
}

func TestTheNamespaceIsDashN(t *testing.T) {
	o := options(t, "-n", "gefyra", "--kubeconfig", "/k", "--context", "kind")
	f := o.f
	for name, want := range map[string]string{"namespace": "gefyra", "kubeconfig": "/k", "context": "kind"} {
		if got, err := f.GetString(name); err != nil || got != want {
			t.Errorf("--%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if f.Lookup("namespace").Hidden || f.Lookup("kubeconfig").Annotations[cobraFilename] == nil {
		t.Error("--namespace is hidden or --kubeconfig does not complete file names")
	}
}

package main

// The Helm chart of deploy/helm and the kustomize component of
// deploy/kustomize, rendered by the real helm and kustomize (built by
// hack/kube-env.sh tools) and applied to the real API server as
// manifests_test.go applies deploy/examples.

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vitals-dev/vitals/examples/controller-runtime/internal/exampletest"
	"github.com/vitals-dev/vitals/internal/kubeenv"
	"github.com/vitals-dev/vitals/internal/testenv"
	"github.com/vitals-dev/vitals/probe/probetest"
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

// renderChart is helm template of the chart, as the release vitals in
// namespace ns, with more of helm template's flags (-f, --set): its objects.
func renderChart(t *testing.T, helm, ns string, flags ...string) []manifest {
	t.Helper()
	args := append([]string{"template", "vitals", chartDir, "--namespace", ns}, flags...)
	return decodeObjects(t, strings.Join(append([]string{"helm template vitals"}, flags...), " "), mustRun(t, helm, args...))
}

// flagArgs are the values a command line gives flag, each the argument
// after it.
func flagArgs(args []string, flag string) []string {
	var values []string
	for i := 1; i < len(args); i++ {
		if args[i-1] == flag {
			values = append(values, args[i])
		}
	}
	return values
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
			var flags []string
			if values != "" {
				flags = []string{"-f", values}
			}
			objects := renderChart(t, helm, a.ns, flags...)
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
					if !slices.Equal(flagArgs(fleet.Args, "--condition"), []string{"vitals.dev/ready"}) {
						t.Errorf("helm template %s: vitals fleet %q: want one --condition vitals.dev/ready", name, fleet.Args)
					}
					for _, probe := range []*corev1.Probe{fleet.LivenessProbe, fleet.ReadinessProbe} {
						if probe == nil || probe.HTTPGet == nil || (probe.HTTPGet.Path != "/livez" && probe.HTTPGet.Path != "/readyz") {
							t.Errorf("helm template %s: a probe of the fleet %+v: want GET /livez or /readyz, which answer the kubelet", name, probe)
						}
					}
					if ns := flagArgs(fleet.Args, "-n"); len(ns) > 0 {
						scope = append([]string{"-n"}, ns...)
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
		{"fleet.details=public", "at '/fleet/details': value must be one of 'local', 'all', 'none'"},
		{"fleet.auth.tokenSecret=fleet-token", "at '/fleet/auth/tokenSecret': got string, want object"},
		{"fleet.auth.tokenSecret.key=page/token", "at '/fleet/auth/tokenSecret/key'"},
		{"fleet.tls.secretName=Fleet_TLS", "at '/fleet/tls/secretName'"},
		{"fleet.tls.clientCA.secretName=true", "at '/fleet/tls/clientCA/secretName': got boolean, want string"},
		{"fleet.tls.enabled=true", "additional properties 'enabled' not allowed"},
		{"extraVolumes=scratch", "at '/extraVolumes': got string, want array"},
		{"extraVolumeMounts[0].name=scratch", "at '/extraVolumeMounts/0': missing property 'mountPath'"},
	} {
		_, err := runTool(helm, "template", "vitals", chartDir, "--set", tc.set)
		if err == nil || !strings.Contains(err.Error(), "values don't meet the specifications of the schema") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("helm template --set %s: %v, want the schema to refuse it: %s", tc.set, err, tc.want)
		}
	}
}

// secretFlags are vitals fleet's flags that name a file of a Secret.
var secretFlags = []string{"--token-file", "--tls-cert", "--tls-key", "--client-ca"}

// secretFiles are the files a container of a pod spec reads from Secrets:
// the path of each (a read-only mount's path joined to an item's) to the
// Secret's name and key, "NAME/KEY".
func secretFiles(spec *corev1.PodSpec, c *corev1.Container) map[string]string {
	files := map[string]string{}
	for _, m := range c.VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name != m.Name || v.Secret == nil || !m.ReadOnly || m.SubPath != "" {
				continue
			}
			for _, item := range v.Secret.Items {
				files[path.Join(m.MountPath, item.Path)] = v.Secret.SecretName + "/" + item.Key
			}
		}
	}
	return files
}

// fleetPod is the pod spec of the fleet's Deployment in a render of the
// chart, and its container fleet.
func fleetPod(t *testing.T, objects []manifest) (*corev1.PodSpec, *corev1.Container) {
	t.Helper()
	for _, m := range objects {
		if m.obj.GetKind() == "Deployment" {
			spec := podSpec(t, m)
			if c := container(spec, false, "fleet"); c != nil {
				return spec, c
			}
			t.Fatalf("%v: no container fleet", m)
		}
	}
	t.Fatal("the chart renders no Deployment")
	return nil, nil
}

// The fleet's token and TLS come from Secrets the values name: each key a
// file of a read-only mount, named by its flag and by no other; the probes
// ask in HTTPS when the page is served over TLS, and the Service says so;
// extraVolumes and extraVolumeMounts are the pod's and the container's.
// The API server accepts each render, and the chart refuses a client CA
// without TLS, as vitals fleet would.
func TestChartMountsTheFleetsSecrets(t *testing.T) {
	helm := kubeTool(t, "helm")
	for _, tc := range []struct {
		name    string
		set     []string          // helm template's --set
		files   map[string]string // each of secretFlags given: the NAME/KEY of the Secret it reads
		https   bool              // the page over TLS: the probes' scheme HTTPS, the Service's appProtocol https
		details []string          // --details given
		mount   string            // a mount of extraVolumeMounts
	}{
		{name: "defaults"},
		{name: "a token", set: []string{"fleet.auth.tokenSecret.name=fleet-token", "fleet.auth.tokenSecret.key=page-token"},
			files: map[string]string{"--token-file": "fleet-token/page-token"}},
		{name: "TLS", set: []string{"fleet.tls.secretName=fleet-tls"},
			files: map[string]string{"--tls-cert": "fleet-tls/tls.crt", "--tls-key": "fleet-tls/tls.key"}, https: true},
		{name: "TLS, a client CA, a token, details and a volume", set: []string{
			"fleet.tls.secretName=fleet-tls", "fleet.tls.clientCA.secretName=clients", "fleet.auth.tokenSecret.name=fleet-token",
			"fleet.details=none", "extraVolumes[0].name=scratch", "extraVolumes[0].emptyDir.medium=Memory",
			"extraVolumeMounts[0].name=scratch", "extraVolumeMounts[0].mountPath=/scratch",
		}, files: map[string]string{
			"--tls-cert": "fleet-tls/tls.crt", "--tls-key": "fleet-tls/tls.key", "--client-ca": "clients/ca.crt", "--token-file": "fleet-token/token",
		}, https: true, details: []string{"none"}, mount: "/scratch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newApplier(t, "chart-secrets-test")
			var flags []string
			for _, s := range tc.set {
				flags = append(flags, "--set", s)
			}
			objects := renderChart(t, helm, a.ns, flags...)
			spec, fleet := fleetPod(t, objects)
			files := secretFiles(spec, fleet)
			for _, flag := range secretFlags {
				got := flagArgs(fleet.Args, flag)
				if want, ok := tc.files[flag]; !ok && len(got) > 0 || ok && (len(got) != 1 || files[got[0]] != want) {
					t.Errorf("vitals fleet %s %q (files from Secrets: %v), want %q", flag, got, files, want)
				}
			}
			if got := flagArgs(fleet.Args, "--details"); !slices.Equal(got, tc.details) {
				t.Errorf("vitals fleet --details %q, want %q", got, tc.details)
			}
			scheme := corev1.URIScheme("") // the API server's default, HTTP
			if tc.https {
				scheme = corev1.URISchemeHTTPS
			}
			for _, probe := range []*corev1.Probe{fleet.LivenessProbe, fleet.ReadinessProbe} {
				if probe == nil || probe.HTTPGet == nil {
					t.Errorf("a probe of the fleet %v: want an httpGet", probe)
				} else if probe.HTTPGet.Scheme != scheme {
					t.Errorf("the fleet's probe of %s asks in %q, want %q", probe.HTTPGet.Path, probe.HTTPGet.Scheme, scheme)
				}
			}
			if tc.mount != "" && !slices.ContainsFunc(fleet.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == tc.mount }) {
				t.Errorf("the fleet's mounts %+v: want the extra %s", fleet.VolumeMounts, tc.mount)
			}
			for _, m := range objects {
				if m.obj.GetKind() != "Service" {
					continue
				}
				ports, _, _ := unstructured.NestedSlice(m.obj.Object, "spec", "ports")
				if got, _, _ := unstructured.NestedString(ports[0].(map[string]any), "appProtocol"); (got == "https") != tc.https {
					t.Errorf("%v: appProtocol %q; the page over TLS: %v", m, got, tc.https)
				}
			}
			a.apply(objects)
		})
	}
	_, err := runTool(helm, "template", "vitals", chartDir, "--set", "fleet.tls.clientCA.secretName=clients")
	if err == nil || !strings.Contains(err.Error(), "fleet.tls.clientCA needs fleet.tls.secretName") {
		t.Errorf("a client CA without TLS: %v, want it refused", err)
	}
}

// offLoopback is an address of this machine off loopback: a connection to
// it comes from it, as one from another pod of the cluster comes from off
// the fleet pod's loopback.
func offLoopback(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil && ip.IP.IsGlobalUnicast() {
			return ip.IP.String()
		}
	}
	testenv.Missing(t, "no IPv4 address off loopback here (%v)", addrs)
	return ""
}

// vitals fleet, as the chart renders it with deploy/helm/examples/tls.yaml,
// runs as in its pod, the files of its Secrets where its mounts put them:
// the kubelet's probes, as rendered, pass over HTTPS with no token and no
// certificate; a client off loopback reads the page with the token or a
// client certificate of the Secret's authority, and with neither is refused.
func TestChartFleetServesItsPageOffLoopback(t *testing.T) {
	helm := kubeTool(t, "helm")
	host := offLoopback(t)
	_, port, _ := net.SplitHostPort(exampletest.FreeAddr(t))
	objects := renderChart(t, helm, "vitals", "-f", filepath.Join(chartValues, "tls.yaml"), "--set", "fleet.port="+port)
	spec, fleet := fleetPod(t, objects)
	if len(fleet.Command) > 0 {
		t.Fatalf("the fleet's command %q: want the image's entrypoint, vitals", fleet.Command)
	}

	// The pod's files, under root: each flag of a Secret's file names one of
	// its mounts.
	root, files := t.TempDir(), secretFiles(spec, fleet)
	at := func(flag string) string {
		t.Helper()
		got := flagArgs(fleet.Args, flag)
		if len(got) != 1 || files[got[0]] == "" {
			t.Fatalf("vitals fleet %s %q: want one file of a Secret (%v)", flag, got, files)
		}
		file := filepath.Join(root, got[0])
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			t.Fatal(err)
		}
		return file
	}
	ca := probetest.NewCA(t)
	probetest.WriteKeyPair(t, ca.ServerFor(t, time.Hour, host), at("--tls-cert"), at("--tls-key"))
	caPEM, err := os.ReadFile(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	const token = "the-fleets-page-token"
	for file, data := range map[string]string{at("--client-ca"): string(caPEM), at("--token-file"): token + "\n"} {
		if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var args []string
	for _, arg := range fleet.Args {
		if files[arg] != "" {
			arg = filepath.Join(root, arg)
		}
		args = append(args, arg)
	}
	args = append(args, "--kubeconfig", kubeenv.SharedFor(t).Kubeconfig) // in a pod, its ServiceAccount's

	cmd := exec.Command(exampletest.BuildVitals(t), args...)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("vitals fleet %q:\n%s", args, logs.String())
		}
	})

	// The kubelet does not verify a probe's certificate, and sends no
	// token or certificate of its own.
	kubelet := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for _, probe := range []*corev1.Probe{fleet.LivenessProbe, fleet.ReadinessProbe} {
		get := probe.HTTPGet
		probePort := get.Port.String()
		for _, p := range fleet.Ports {
			if p.Name == probePort {
				probePort = fmt.Sprint(p.ContainerPort)
			}
		}
		url := strings.ToLower(string(get.Scheme)) + "://" + net.JoinHostPort(host, probePort) + get.Path
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(exampletest.PollEvery) { // a guard only
			code, body := fetch(kubelet, url, "")
			if code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the fleet's probe, GET %s: %d %q, want 200 within 30s", url, code, body)
			}
		}
	}

	trusting := &tls.Config{RootCAs: x509.NewCertPool()}
	trusting.RootCAs.AddCert(ca.Cert)
	certFile, keyFile := ca.Client(t)
	clientCert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	withCert := trusting.Clone()
	withCert.Certificates = []tls.Certificate{clientCert}
	page := "https://" + net.JoinHostPort(host, port) + "/api/fleet"
	for _, tc := range []struct {
		who   string
		tls   *tls.Config
		token string
		want  int
	}{
		{"a client with neither the token nor a certificate", trusting, "", http.StatusUnauthorized},
		{"a client with a wrong token", trusting, "not-" + token, http.StatusUnauthorized},
		{"a client with the token", trusting, token, http.StatusOK},
		{"a client with a certificate of the authority", withCert, "", http.StatusOK},
	} {
		client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tc.tls}}
		if code, body := fetch(client, page, tc.token); code != tc.want {
			t.Errorf("%s off loopback, GET %s: %d %q, want %d", tc.who, page, code, body, tc.want)
		}
	}
}

// fetch answers a GET of url by client, with the bearer token if not "":
// its status code and body, or 0 and the error.
func fetch(client *http.Client, url, token string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
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

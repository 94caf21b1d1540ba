package importer

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	grpchealthserver "google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/grpchealth"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

func TestADeploymentsThreeProbesBecomeChecksWithTheSameTiming(t *testing.T) {
	r, err := Kubernetes("testdata/web-deployment.yaml", read(t, "testdata/web-deployment.yaml"), "")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/web-deployment.vitals.yaml", r.YAML)
	sameLines(t, "warnings", r.Warnings, []string{
		`web-ready: timeoutSeconds 15 is longer than periodSeconds 10, which vitals refuses: written as timeout: 10s`,
		`web-startup, web-live: no host, so the kubelet probes the pod IP: written as localhost, the pod seen from inside it`,
	})
	checks := load(t, r.YAML)
	for name, want := range map[string]struct {
		timing timing
		spec   any
	}{
		"web-startup": {
			timing{health.Startup, 5 * time.Second, time.Second, 0, 1, 60},
			// follow-redirects is left at its default, the kubelet's rule:
			// same-host redirects followed, another host's the answer.
			kinds.HTTPSpec{HTTPSpec: probe.HTTPSpec{URL: "http://localhost:9090/healthz?phase=startup", Header: http.Header{"X-Probe": {"startup"}}}},
		},
		"web-live": {
			timing{health.Live, 20 * time.Second, time.Second, 15 * time.Second, 1, 3},
			probe.TCPSpec{Address: "localhost:8080"},
		},
		"web-ready": {
			timing{health.Ready, 10 * time.Second, 10 * time.Second, 0, 2, 3},
			probe.ExecSpec{Command: []string{"/bin/sh", "-c", "test -s /var/cache/web/catalog.json && echo $HOSTNAME ready"}},
		},
	} {
		c, ok := checks[name]
		if !ok {
			t.Errorf("no check %q", name)
			continue
		}
		if got := timingOf(c); got != want.timing {
			t.Errorf("%s: timing %+v, want %+v", name, got, want.timing)
		}
		if !reflect.DeepEqual(c.Spec, want.spec) {
			t.Errorf("%s: spec %#v, want %#v", name, c.Spec, want.spec)
		}
	}
	if len(checks) != 3 {
		t.Errorf("%d checks, want 3", len(checks))
	}
	// The liveness probe's own grace: vitals stops the workload with it,
	// and exits, for the kubelet to restart the container.
	if live := checks["web-live"]; live.OnFailure != config.OnFailureExit || live.StopTimeout != 10*time.Second {
		t.Errorf("web-live: on-failure %s, stop-timeout %v; want exit, 10s", live.OnFailure, live.StopTimeout)
	}
}

func TestAStatefulSetIsFoundAmongTheDocumentsOfAFile(t *testing.T) {
	r, err := Kubernetes("postgres.yaml", read(t, "testdata/postgres.yaml"), "")
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "warnings", r.Warnings, []string{
		`postgresql-live: no host, so the kubelet probes the pod IP: written as localhost, the pod seen from inside it`,
	})
	if !strings.HasPrefix(string(r.YAML), config.SchemaComment+"\n# Made by vitals import k8s from postgres.yaml: statefulset/postgres, container postgresql.\n") {
		t.Errorf("header:\n%s", r.YAML)
	}
	checks := load(t, r.YAML)
	if got, want := timingOf(checks["postgresql-live"]), (timing{health.Live, 10 * time.Second, 5 * time.Second, 30 * time.Second, 1, 6}); got != want {
		t.Errorf("postgresql-live: %+v, want %+v", got, want)
	}
	if got := checks["postgresql-live"].Spec.(probe.TCPSpec).Address; got != "localhost:5432" {
		t.Errorf("the named port tcp-postgresql is %q, want localhost:5432", got)
	}
	want := []string{"/bin/sh", "-c", `exec pg_isready -U "app" -h 127.0.0.1 -p 5432`}
	if got := checks["postgresql-ready"].Spec.(probe.ExecSpec).Command; !reflect.DeepEqual(got, want) {
		t.Errorf("postgresql-ready runs %q, want %q ($(POSTGRES_USER) expanded as the kubelet does)", got, want)
	}
}

func TestWithoutContainerEveryContainerOfTheWorkloadIsImportedSayingWhatDiffers(t *testing.T) {
	r, err := Kubernetes("pod.yaml", read(t, "testdata/pod-two-containers.yaml"), "")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/pod-two-containers.vitals.yaml", r.YAML)
	sameLines(t, "warnings", r.Warnings, []string{
		`api-ready: scheme HTTPS, whose certificate the kubelet does not verify: written as insecure: true (give ca-file instead to verify it)`,
		`container "migrate" of pod/api has no startupProbe, livenessProbe or readinessProbe: no check of it is written`,
		`api-live: no host, so the kubelet probes the pod IP: written as localhost, the pod seen from inside it`,
		`pod/api has 3 containers (api, envoy, migrate), and vitals runs in one of them (each has an image of its own): the file has the checks of all of them and no service:; run vitals in one container, with that container's command after --`,
		`envoy-ready: the kubelet runs an exec probe in its own container; vitals runs it in the container vitals runs in`,
		`api-live: the kubelet restarts the container whose liveness probe fails; here any live check fails /livez of the container vitals runs in`,
	})
	c := loadConfig(t, r.YAML)
	if len(c.Services) != 0 {
		t.Errorf("a service: block from several containers: %+v", c.Services)
	}
	checks := load(t, r.YAML)
	if len(checks) != 3 {
		t.Errorf("%d checks, want api-live, api-ready and envoy-ready:\n%s", len(checks), r.YAML)
	}
	if got := checks["api-live"].Spec.(grpchealth.GRPCSpec).URL; got != "grpc://localhost:9000/liveness" {
		t.Errorf("api-live asks %q", got)
	}
	if got := checks["envoy-ready"].Spec.(probe.ExecSpec).Command; !reflect.DeepEqual(got, []string{"/bin/true"}) {
		t.Errorf("envoy-ready runs %q", got)
	}
}

// An exec liveness probe of one of several containers differs twice: it ran
// in its own container, and its failure restarted that container alone. The
// file and the warnings say both.
func TestALiveExecProbeOfOneOfSeveralContainersIsSaidToDifferTwice(t *testing.T) {
	r, err := Kubernetes("pod.yaml", manifest("kind: Pod", "metadata: {name: p}", "spec:", "  containers:",
		"    - name: app",
		"      livenessProbe: {exec: {command: [cat, /tmp/healthy]}}",
		"    - name: proxy",
		"      readinessProbe: {tcpSocket: {port: 80, host: 127.0.0.1}}"), "")
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "warnings", r.Warnings, []string{
		`pod/p has 2 containers (app, proxy), and vitals runs in one of them (each has an image of its own): the file has the checks of all of them and no service:; run vitals in one container, with that container's command after --`,
		`app-live: the kubelet runs an exec probe in its own container; vitals runs it in the container vitals runs in`,
		`app-live: the kubelet restarts the container whose liveness probe fails; here any live check fails /livez of the container vitals runs in`,
	})
	for _, want := range []string{
		"# An exec check runs in the container vitals runs in, not in its own.\n",
		"# A live check that fails fails /livez of the container vitals runs in:\n",
	} {
		if !strings.Contains(string(r.YAML), want) {
			t.Errorf("the file lacks %q:\n%s", want, r.YAML)
		}
	}
}

func TestContainerImportsOneContainerOfAWorkload(t *testing.T) {
	data := read(t, "testdata/pod-two-containers.yaml")
	_, err := Kubernetes("pod.yaml", data, "nginx")
	if want := `pod.yaml has no container "nginx"; its containers are api, envoy, migrate (pod/api)`; err == nil || err.Error() != want {
		t.Fatalf("--container nginx: %v, want %q", err, want)
	}

	r, err := Kubernetes("pod.yaml", data, "api")
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "warnings", r.Warnings, []string{
		`api-ready: scheme HTTPS, whose certificate the kubelet does not verify: written as insecure: true (give ca-file instead to verify it)`,
		`api-live: no host, so the kubelet probes the pod IP: written as localhost, the pod seen from inside it`,
	})
	want := config.SchemaComment + "\n" +
		"# Made by vitals import k8s from pod.yaml: pod/api, container api.\n" +
		"checks:\n" +
		"  api-live:\n" +
		"    level: live\n" +
		"    grpc:\n" +
		"      url: grpc://localhost:9000/liveness\n" +
		"    period: 15s\n" +
		"    timeout: 1s\n" +
		"    initial-delay: 0s\n" +
		"    success-threshold: 1\n" +
		"    failure-threshold: 3\n" +
		"  api-ready:\n" +
		"    level: ready\n" +
		"    http:\n" +
		"      url: https://127.0.0.1:9100/ready\n" +
		"      insecure: true  # the kubelet does not verify the certificate\n" +
		"    period: 10s\n" +
		"    timeout: 1s\n" +
		"    initial-delay: 0s\n" +
		"    success-threshold: 1\n" +
		"    failure-threshold: 3\n"
	if string(r.YAML) != want {
		t.Errorf("--container api:\n%s\nwant:\n%s", r.YAML, want)
	}
	if spec := load(t, r.YAML)["api-ready"].Spec.(kinds.HTTPSpec); !spec.TLS.InsecureSkipVerify {
		t.Errorf("api-ready verifies the certificate, which the kubelet does not")
	}

	r, err = Kubernetes("pod.yaml", data, "api/envoy")
	if err != nil {
		t.Fatal(err)
	}
	if checks := load(t, r.YAML); len(checks) != 1 || !reflect.DeepEqual(checks["envoy-ready"].Spec.(probe.ExecSpec).Command, []string{"/bin/true"}) {
		t.Errorf("--container api/envoy:\n%s", r.YAML)
	}
	if _, err := Kubernetes("pod.yaml", data, "migrate"); err == nil || !strings.Contains(err.Error(), `container "migrate" of pod/api has no startupProbe`) {
		t.Errorf("--container migrate, which has no probe: %v", err)
	}
}

// A grpc probe asks the kubelet's question of a real health server: the
// service the manifest names, exactly, whatever a URL path must escape in
// it, and "" (the server as a whole) when it names none.
func TestAGRPCProbeAsksTheServiceItNames(t *testing.T) {
	services := []string{"", "liveness", "grpc.health.v1.Health", "a b", "what?#", "100%", "/lead", "ünï", "a/b"}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := grpchealthserver.NewServer() // "" is SERVING
	for _, s := range services {
		hs.SetServingStatus(s, healthpb.HealthCheckResponse_SERVING)
	}
	healthpb.RegisterHealthServer(srv, hs)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	port := l.Addr().(*net.TCPAddr).Port

	for _, service := range append(services, "unknown") {
		line := fmt.Sprintf("      readinessProbe: {grpc: {port: %d, service: %s}}", port, strconv.Quote(service))
		if service == "" {
			line = fmt.Sprintf("      readinessProbe: {grpc: {port: %d}}", port)
		}
		r, err := Kubernetes("pod.yaml", manifest("kind: Pod", "metadata: {name: p}", "spec:", "  containers:", "    - name: app", line), "")
		if err != nil {
			t.Fatalf("service %q: %v", service, err)
		}
		sameLines(t, "warnings", r.Warnings, []string{
			`app-ready: no host, so the kubelet probes the pod IP: written as localhost, the pod seen from inside it`,
		})
		spec := load(t, r.YAML)["app-ready"].Spec.(grpchealth.GRPCSpec)
		p, err := grpchealth.GRPC(spec)
		if err != nil {
			t.Fatalf("service %q: %v", service, err)
		}
		res := health.Run(context.Background(), p, 10*time.Second) // a guard: the server is here
		if res.OK != (service != "unknown") {
			t.Errorf("service %q as %s: %+v\n%s", service, spec.URL, res, r.YAML)
		}
	}
}

func TestAServiceNameAURLPathEscapesIsWrittenEscapedWithItsName(t *testing.T) {
	r, err := Kubernetes("pod.yaml", manifest("kind: Pod", "metadata: {name: p}", "spec:", "  containers:", "    - name: app",
		`      livenessProbe: {grpc: {port: 50051, service: "my service?"}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if want := "      url: grpc://localhost:50051/my%20service%3F  # service \"my service?\"\n"; !strings.Contains(string(r.YAML), want) {
		t.Errorf("want %q in:\n%s", want, r.YAML)
	}
}

// manifest is a manifest given line by line.
func manifest(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

func TestEveryKindWithAPodTemplateIsFound(t *testing.T) {
	probe := []string{
		"    - name: app",
		"      readinessProbe: {tcpSocket: {port: 80, host: 127.0.0.1}}",
	}
	indent := func(prefix string, lines []string) []string {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = prefix + l
		}
		return out
	}
	for _, tt := range []struct {
		ref   string
		lines []string
	}{
		{"pod/p", append([]string{"kind: Pod", "metadata: {name: p}", "spec:", "  containers:"}, probe...)},
		{"daemonset/d", append([]string{"kind: DaemonSet", "metadata: {name: d}", "spec:", "  template:", "    spec:", "      containers:"},
			indent("    ", probe)...)},
		{"job/j", append([]string{"apiVersion: batch/v1", "kind: Job", "metadata: {name: j}", "spec:", "  template:", "    spec:", "      containers:"},
			indent("    ", probe)...)},
		{"cronjob/c", append([]string{"kind: CronJob", "metadata: {name: c}", "spec:", "  schedule: '*/5 * * * *'", "  jobTemplate:", "    spec:",
			"      template:", "        spec:", "          containers:"}, indent("        ", probe)...)},
		{"rollout/r", append([]string{"apiVersion: argoproj.io/v1alpha1", "kind: Rollout", "metadata: {name: r}", "spec:", "  template:", "    spec:", "      containers:"},
			indent("    ", probe)...)},
		{"pod/in-a-list", append([]string{"kind: List", "items:", "  - kind: Pod", "    metadata: {name: in-a-list}", "    spec:", "      containers:"},
			indent("    ", probe)...)},
		{"deployment/sidecar", []string{"kind: Deployment", "metadata: {name: sidecar}", "spec:", "  template:", "    spec:",
			"      initContainers:",
			"        - name: migrate",
			"        - name: app",
			"          restartPolicy: Always",
			"          readinessProbe: {tcpSocket: {port: 80, host: 127.0.0.1}}",
			"      containers: []"}},
	} {
		r, err := Kubernetes("m.yaml", manifest(tt.lines...), "")
		if err != nil {
			t.Errorf("%s: %v", tt.ref, err)
			continue
		}
		if !strings.HasPrefix(string(r.YAML), config.SchemaComment+"\n# Made by vitals import k8s from m.yaml: "+tt.ref+", container app.\n") || len(r.Warnings) > 0 {
			t.Errorf("%s:\n%s%q", tt.ref, r.YAML, r.Warnings)
		}
		if _, ok := load(t, r.YAML)["app-ready"]; !ok {
			t.Errorf("%s: no check app-ready:\n%s", tt.ref, r.YAML)
		}
	}
}

func TestProbeSettingsVitalsCannotCarryAreSaid(t *testing.T) {
	r, err := Kubernetes("pod.yaml", manifest(
		"kind: Pod",
		"metadata: {name: p}",
		"spec:",
		"  containers:",
		"    - name: app",
		"      ports: [{name: http, containerPort: 8080}]",
		"      env:",
		"        - {name: TOKEN, value: s3cret}",
		"        - name: POD_NAME",
		"          valueFrom: {fieldRef: {fieldPath: metadata.name}}",
		"      startupProbe:",
		"        httpGet: {port: web, path: /}",
		"      livenessProbe:",
		"        httpGet:",
		"          port: '8080'",
		"          path: healthz",
		"          protocol: HTTP2",
		"          httpHeaders: [{name: Accept, value: ''}, {name: X-A, value: '1'}, {name: X-A, value: '2'}]",
		"        periodSeconds: 0",
		"        timeoutSeconds: 0",
		"        probeSpeed: fast",
		"      readinessProbe:",
		"        exec:",
		"          command: [/bin/echo, '$(POD_NAME)', '$(MISSING)', '$$(TOKEN)', '$(TOKEN)', '$(POD_NAME)']",
	), "")
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "warnings", r.Warnings, []string{
		`app-startup: left out: httpGet port "web" is not a port of container "app"`,
		`app-live: livenessProbe.probeSpeed is not a field vitals import knows: left out`,
		`app-live: httpGet.protocol HTTP2 (h2c) is left out: vitals asks in HTTP/1.1`,
		`app-ready: exec command's $(POD_NAME) is set by valueFrom, which the kubelet does not resolve in a probe's command: it is empty there, and here`,
		`app-ready: exec command's $(MISSING) is no variable of container "app": kept as written, as the kubelet does`,
		`app-live: no host, so the kubelet probes the pod IP: written as localhost, the pod seen from inside it`,
	})
	checks := load(t, r.YAML)
	live := checks["app-live"]
	wantHTTP := kinds.HTTPSpec{HTTPSpec: probe.HTTPSpec{URL: "http://localhost:8080/healthz", Header: http.Header{"Accept": {""}, "X-A": {"1", "2"}}}}
	if !reflect.DeepEqual(live.Spec, wantHTTP) || live.Period != 10*time.Second || live.Timeout != time.Second {
		t.Errorf("app-live: %#v every %v within %v", live.Spec, live.Period, live.Timeout)
	}
	wantCmd := []string{"/bin/echo", "", "$(MISSING)", "$(TOKEN)", "s3cret", ""}
	if got := checks["app-ready"].Spec.(probe.ExecSpec).Command; !reflect.DeepEqual(got, wantCmd) {
		t.Errorf("app-ready runs %q, want %q", got, wantCmd)
	}
	if !strings.Contains(string(r.YAML), "  # app-startup: left out: httpGet port \"web\" is not a port of container \"app\"\n") {
		t.Errorf("the file does not say app-startup is left out:\n%s", r.YAML)
	}
}

func TestAFileThatDoesNotLoadOnThisMachineIsAWarning(t *testing.T) {
	r, err := Kubernetes("pod.yaml", manifest(
		"kind: Pod",
		"spec:",
		"  containers:",
		"    - name: app",
		"      livenessProbe: {exec: {command: [vitals-import-test-no-such-command]}}",
	), "")
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "warnings", r.Warnings, []string{
		`the file does not load on this machine: vitals.yaml:7:14: checks.app-live.exec: command "vitals-import-test-no-such-command" not found in $PATH`,
	})
}

func TestBadManifestsSayWhatAndWhere(t *testing.T) {
	pod := func(probe ...string) []byte {
		return manifest(append([]string{"kind: Pod", "metadata: {name: p}", "spec:", "  containers:", "    - name: app"}, probe...)...)
	}
	for _, tt := range []struct {
		name      string
		data      []byte
		container string
		want      string
	}{
		{"not YAML", manifest("kind: Pod", "spec: {containers: [}"), "", "m.yaml:2:21: not YAML: could not find '{' character corresponding to '}'"},
		{"not a manifest", manifest("hello, world"), "", `not a Kubernetes manifest: m.yaml:1:1: want a mapping, got "hello, world"`},
		{"empty", nil, "", "m.yaml: no Pod, Deployment, StatefulSet, DaemonSet, Job or CronJob with containers"},
		{"a Service only", manifest("kind: Service", "metadata: {name: s}", "spec: {ports: [{port: 80}]}"), "",
			"m.yaml: no Pod, Deployment, StatefulSet, DaemonSet, Job or CronJob with containers"},
		{"no probes", pod("      image: nginx"), "", `m.yaml:5:7: spec.containers[0]: container "app" of pod/p has no startupProbe, livenessProbe or readinessProbe`},
		{"unknown container", pod("      readinessProbe: {tcpSocket: {port: 80}}"), "web", `m.yaml has no container "web"; its containers are app (pod/p)`},
		{"no handler", pod("      readinessProbe: {periodSeconds: 5}"), "",
			"m.yaml:6:24: spec.containers[0].readinessProbe: no handler: a probe has one of exec, httpGet, tcpSocket and grpc"},
		{"two handlers", pod("      readinessProbe: {tcpSocket: {port: 80}, exec: {command: [x]}}"), "",
			"m.yaml:6:24: spec.containers[0].readinessProbe: a probe has one handler, not exec and tcpSocket"},
		{"negative period", pod("      readinessProbe: {tcpSocket: {port: 80}, periodSeconds: -1}"), "",
			"m.yaml:6:62: spec.containers[0].readinessProbe.periodSeconds: -1 is negative"},
		{"period as a string", pod("      readinessProbe: {tcpSocket: {port: 80}, periodSeconds: '5'}"), "",
			`m.yaml:6:62: spec.containers[0].readinessProbe.periodSeconds: want a whole number, got "5"`},
		{"no port", pod("      readinessProbe: {tcpSocket: {host: db}}"), "",
			"m.yaml:6:36: spec.containers[0].readinessProbe.tcpSocket.port: required"},
		{"bad port", pod("      readinessProbe: {httpGet: {port: 0}}"), "",
			"m.yaml:6:40: spec.containers[0].readinessProbe.httpGet.port: 0 is not a port (1 to 65535)"},
		{"bad scheme", pod("      readinessProbe: {httpGet: {port: 80, scheme: FTP}}"), "",
			`m.yaml:6:52: spec.containers[0].readinessProbe.httpGet.scheme: "FTP": want HTTP or HTTPS`},
		{"empty command", pod("      livenessProbe: {exec: {command: []}}"), "",
			"m.yaml:6:39: spec.containers[0].livenessProbe.exec.command: required, with the program as its first word"},
		{"only a probe left out", pod("      livenessProbe: {httpGet: {port: web}}"), "", `m.yaml: no probe of container "app" could be carried over`},
		{"grpc without a port", pod("      livenessProbe: {grpc: {service: x}}"), "",
			"m.yaml:6:30: spec.containers[0].livenessProbe.grpc.port: required"},
		{"a named grpc port", pod("      livenessProbe: {grpc: {port: grpc}}"), "",
			`m.yaml:6:36: spec.containers[0].livenessProbe.grpc.port: want a whole number, got "grpc"`},
		{"a grpc port out of range", pod("      livenessProbe: {grpc: {port: 65536}}"), "",
			"m.yaml:6:36: spec.containers[0].livenessProbe.grpc.port: 65536 is not a port (1 to 65535)"},
		{"no probe in any container", manifest("kind: Pod", "metadata: {name: p}", "spec: {containers: [{name: a}, {name: b}]}"), "",
			"m.yaml: no probe of the containers of pod/p could be carried over"},
		{"two workloads, one container name", manifest(
			"kind: Deployment", "metadata: {name: a}", "spec: {template: {spec: {containers: [{name: app}]}}}", "---",
			"kind: Deployment", "metadata: {name: b}", "spec: {template: {spec: {containers: [{name: app}]}}}"), "app",
			`m.yaml has 2 containers named "app", in deployment/a, deployment/b: give --container WORKLOAD/app, such as a/app`},
		{"rules without a policy", pod("      restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [1]}}]",
			"      readinessProbe: {tcpSocket: {port: 80}}"), "",
			"m.yaml:5:7: spec.containers[0].restartPolicy: required with restartPolicyRules"},
		{"a policy the kubelet has not", pod("      restartPolicy: Sometimes", "      readinessProbe: {tcpSocket: {port: 80}}"), "",
			`m.yaml:6:22: spec.containers[0].restartPolicy: "Sometimes": want Always, OnFailure or Never`},
		{"a rule's action unknown", pod("      restartPolicy: Never", "      restartPolicyRules: [{action: Reboot, exitCodes: {operator: In, values: [1]}}]",
			"      readinessProbe: {tcpSocket: {port: 80}}"), "",
			`m.yaml:7:37: spec.containers[0].restartPolicyRules[0].action: "Reboot": want Restart or RestartAllContainers`},
		{"a rule's operator unknown", pod("      restartPolicy: Never", "      restartPolicyRules: [{action: Restart, exitCodes: {operator: Exists, values: [1]}}]",
			"      readinessProbe: {tcpSocket: {port: 80}}"), "",
			`m.yaml:7:68: spec.containers[0].restartPolicyRules[0].exitCodes.operator: "Exists": want In or NotIn`},
		{"a rule with no codes", pod("      restartPolicy: Never", "      restartPolicyRules: [{action: Restart, exitCodes: {operator: In}}]",
			"      readinessProbe: {tcpSocket: {port: 80}}"), "",
			`m.yaml:7:58: spec.containers[0].restartPolicyRules[0].exitCodes.values: required: the exit codes the rule is about`},
		{"a code past 255", pod("      restartPolicy: Never", "      restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [256]}}]",
			"      readinessProbe: {tcpSocket: {port: 80}}"), "",
			`m.yaml:7:81: spec.containers[0].restartPolicyRules[0].exitCodes.values[0]: 256 is not an exit code (0 to 255)`},
		{"a probe's grace of 0", pod("      livenessProbe: {tcpSocket: {port: 80}, terminationGracePeriodSeconds: 0}"), "",
			`m.yaml:6:77: spec.containers[0].livenessProbe.terminationGracePeriodSeconds: 0: must be 1 or more`},
		{"two workloads", manifest(
			"kind: Deployment", "metadata: {name: a}", "spec: {template: {spec: {containers: [{name: app}]}}}", "---",
			"kind: Job", "metadata: {name: b}", "spec: {template: {spec: {containers: [{name: migrate}]}}}"), "",
			"m.yaml has 2 workloads (deployment/a, job/b), and vitals runs in one pod: --container must name a container of one, as NAME or WORKLOAD/NAME: app (deployment/a), migrate (job/b)"},
	} {
		_, err := Kubernetes("m.yaml", tt.data, tt.container)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestExpandK8sExpandsAsTheKubeletDoes(t *testing.T) {
	env := map[string]envVar{"A": {value: "x"}, "EMPTY": {}, "FROM": {from: true}}
	for in, want := range map[string]string{
		"plain":       "plain",
		"$(A)":        "x",
		"a$(A)b$(A)":  "axbx",
		"$$(A)":       "$(A)",
		"$$":          "$",
		"$":           "$",
		"a$":          "a$",
		"$A":          "$A",
		"$(B)":        "$(B)",
		"$(A":         "$(A",
		"$(EMPTY)":    "",
		"$(FROM)":     "",
		"$$$(A)":      "$x",
		"${A}":        "${A}",
		"$(A)$(A":     "x$(A",
		"cost: $5.00": "cost: $5.00",
	} {
		if got, _ := expandK8s(in, env); got != want {
			t.Errorf("expandK8s(%q) = %q, want %q", in, got, want)
		}
	}
}

// A container's own restartPolicy and restartPolicyRules (KEP-5307) are the
// service: block's restart and restart-rules: vitals restarts the workload
// where the kubelet restarted the container. The pod's restartPolicy, and a
// sidecar's, stay the kubelet's, which applies them to vitals's exit.
func TestAContainersRestartRulesAreItsServicesRestartAndRules(t *testing.T) {
	const after = "  # the workload inside the container, where the kubelet restarted the\n" +
		"  # container. Its command is the container's, given after --.\n"
	const comment = "service:\n" +
		"  # Container app's restartPolicy and restartPolicyRules: vitals restarts\n" + after
	const policyOnly = "service:\n" +
		"  # Container app's restartPolicy: vitals restarts\n" + after
	for _, tt := range []struct {
		name      string
		pod       []string // the pod spec's lines; its container app has a readinessProbe
		container []string // app's lines
		want      string   // the service: block; "" for none
		restart   string
		rules     []config.RestartRule
		warnings  []string
	}{
		{"restart on one code, never otherwise", nil,
			[]string{"restartPolicy: Never", "restartPolicyRules:", "  - action: Restart", "    exitCodes: {operator: In, values: [42]}"},
			comment +
				"  restart: never  # restartPolicy: Never\n" +
				"  restart-rules:\n" +
				"    - {action: restart, exit-codes: {operator: in, values: [42]}}\n",
			config.RestartNever, []config.RestartRule{{Action: "restart", In: true, Codes: []int{42}}}, nil},
		{"restart after a failure but some, restarting all the containers after others", nil,
			[]string{"restartPolicy: OnFailure", "restartPolicyRules:",
				"  - {action: RestartAllContainers, exitCodes: {operator: In, values: [137, 143]}}",
				"  - {action: Restart, exitCodes: {operator: NotIn, values: [0, 1]}}"},
			comment +
				"  restart: on-failure  # restartPolicy: OnFailure\n" +
				"  restart-rules:\n" +
				"    - {action: exit, exit-codes: {operator: in, values: [137, 143]}}  # RestartAllContainers: the kubelet's rule restarts them all\n" +
				"    - {action: restart, exit-codes: {operator: not-in, values: [0, 1]}}\n",
			config.RestartOnFailure, []config.RestartRule{{Action: "exit", In: true, Codes: []int{137, 143}}, {Action: "restart", In: false, Codes: []int{0, 1}}},
			[]string{`container "app": restartPolicyRules action RestartAllContainers is written as exit: vitals exits with the code, and the kubelet's own rule on the container restarts all the containers`}},
		{"a policy of its own, with no rule", []string{"restartPolicy: Never"}, []string{"restartPolicy: Always"},
			policyOnly + "  restart: always  # restartPolicy: Always\n", config.RestartAlways, nil, nil},
		{"the pod's policy only", []string{"restartPolicy: OnFailure"}, nil, "", "", nil, nil},
	} {
		lines := append([]string{"kind: Pod", "metadata: {name: p}", "spec:"}, indent("  ", tt.pod)...)
		lines = append(lines, "  containers:", "    - name: app", "      readinessProbe: {tcpSocket: {port: 80, host: 127.0.0.1}}")
		r, err := Kubernetes("pod.yaml", manifest(append(lines, indent("      ", tt.container)...)...), "")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		sameLines(t, tt.name+": warnings", r.Warnings, tt.warnings)
		c := loadConfig(t, r.YAML)
		if tt.want == "" {
			if strings.Contains(string(r.YAML), "service:") || len(c.Services) != 0 {
				t.Errorf("%s: a service: block:\n%s", tt.name, r.YAML)
			}
			continue
		}
		if got := section(t, r.YAML, "service:"); got != tt.want {
			t.Errorf("%s: the service is written\n%s\nwant\n%s", tt.name, got, tt.want)
		}
		if len(c.Services) != 1 || c.Services[0].Restart != tt.restart || !reflect.DeepEqual(c.Services[0].RestartRules, tt.rules) {
			t.Errorf("%s: loads as %+v, want restart %s, rules %+v", tt.name, c.Services, tt.restart, tt.rules)
		}
	}
}

// Restart rules vitals cannot apply for the kubelet are said, not written:
// a sidecar's, which the kubelet does not apply either, and those of one
// of several containers, which vitals does not run.
func TestRestartRulesVitalsDoesNotApplyAreSaid(t *testing.T) {
	rules := []string{"restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [42]}}]"}
	r, err := Kubernetes("pod.yaml", manifest(append([]string{"kind: Pod", "metadata: {name: p}", "spec:",
		"  containers: []", "  initContainers:", "    - name: proxy", "      restartPolicy: Always", "      readinessProbe: {tcpSocket: {port: 80, host: 127.0.0.1}}"},
		indent("      ", rules)...)...), "proxy")
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "a sidecar's: warnings", r.Warnings, []string{
		`container "proxy": restartPolicyRules are left out: the kubelet does not apply them to a sidecar, which it restarts after any exit`,
	})
	if len(loadConfig(t, r.YAML).Services) != 0 {
		t.Errorf("a sidecar's rules are written:\n%s", r.YAML)
	}

	r, err = Kubernetes("pod.yaml", manifest(append([]string{"kind: Pod", "metadata: {name: p}", "spec:", "  containers:",
		"    - name: proxy", "      readinessProbe: {tcpSocket: {port: 80, host: 127.0.0.1}}",
		"    - name: app", "      restartPolicy: Never", "      readinessProbe: {tcpSocket: {port: 81, host: 127.0.0.1}}"},
		indent("      ", rules)...)...), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Warnings[len(r.Warnings)-1]; got != `container "app": restartPolicy and restartPolicyRules are left out: vitals runs in one container, and the kubelet applies them to each` {
		t.Errorf("several containers: warnings %q", r.Warnings)
	}
	if len(loadConfig(t, r.YAML).Services) != 0 {
		t.Errorf("the rules of one of several containers are written:\n%s", r.YAML)
	}
}

// A liveness or startup probe's own terminationGracePeriodSeconds is its
// check's stop-timeout, with on-failure: exit, as the kubelet killed the
// container with it; a readiness probe's, which the API server refuses, and
// those of one of several containers, are said.
func TestAProbesOwnGraceIsItsChecksStopTimeout(t *testing.T) {
	r, err := Kubernetes("pod.yaml", manifest("kind: Pod", "metadata: {name: p}", "spec:", "  terminationGracePeriodSeconds: 60", "  containers:",
		"    - name: app",
		"      startupProbe: {tcpSocket: {port: 80, host: 127.0.0.1}, terminationGracePeriodSeconds: 5}",
		"      readinessProbe: {tcpSocket: {port: 80, host: 127.0.0.1}, terminationGracePeriodSeconds: 7}",
	), "")
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "warnings", r.Warnings, []string{
		`app-ready: readinessProbe.terminationGracePeriodSeconds 7 is left out: the API server refuses it, as a readiness probe kills nothing`,
	})
	want := "    on-failure: exit  # the kubelet killed the container, with the probe's own grace\n" +
		"    stop-timeout: 5s  # startupProbe.terminationGracePeriodSeconds\n"
	if !strings.Contains(string(r.YAML), "    failure-threshold: 3\n"+want+"  app-ready:\n") {
		t.Errorf("app-startup does not end with\n%s\nthe file is\n%s", want, r.YAML)
	}
	checks := load(t, r.YAML)
	if c := checks["app-startup"]; c.OnFailure != config.OnFailureExit || c.StopTimeout != 5*time.Second {
		t.Errorf("app-startup: on-failure %s, stop-timeout %v; want exit, 5s", c.OnFailure, c.StopTimeout)
	}
	if c := checks["app-ready"]; c.OnFailure != config.OnFailureIgnore || c.StopTimeout != 0 {
		t.Errorf("app-ready: on-failure %s, stop-timeout %v; want ignore, none", c.OnFailure, c.StopTimeout)
	}

	r, err = Kubernetes("pod.yaml", manifest("kind: Pod", "metadata: {name: p}", "spec:", "  containers:",
		"    - name: app",
		"      livenessProbe: {tcpSocket: {port: 80, host: 127.0.0.1}, terminationGracePeriodSeconds: 5}",
		"    - name: proxy",
		"      readinessProbe: {tcpSocket: {port: 81, host: 127.0.0.1}}",
	), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Warnings[0]; got != `app-live: livenessProbe.terminationGracePeriodSeconds 5 is left out: the kubelet kills container app, which vitals does not run` {
		t.Errorf("several containers: warnings %q", r.Warnings)
	}
	if c := load(t, r.YAML)["app-live"]; c.OnFailure != config.OnFailureIgnore || c.StopTimeout != 0 {
		t.Errorf("app-live of one of several containers: on-failure %s, stop-timeout %v; want ignore, none", c.OnFailure, c.StopTimeout)
	}
}

// A probe's host written with credentials (user:password@host) makes the
// kubelet's probe fail every time: the check is written without them, and
// neither the file nor what the import says shows the password.
func TestCredentialsInAProbesHostAreLeftOutAndTheirPasswordUnsaid(t *testing.T) {
	r, err := Kubernetes("pod.yaml", manifest("kind: Pod", "metadata: {name: p}", "spec:", "  containers:", "    - name: app",
		`      livenessProbe: {httpGet: {port: 8080, path: /healthz, host: "admin:s3cret@api.internal"}}`,
		`      readinessProbe: {tcpSocket: {port: 5432, host: "app:s3cret@db.internal"}}`,
	), "")
	if err != nil {
		t.Fatalf("%v", err)
	}
	sameLines(t, "warnings", r.Warnings, []string{
		`app-live: httpGet.host "admin:xxxxx@api.internal" holds credentials, with which the kubelet's probe fails every time: written without them; ` +
			`to log in, write url: http://admin:${PASSWORD}@api.internal:8080/healthz, with PASSWORD in vitals's environment`,
		`app-ready: tcpSocket.host "app:xxxxx@db.internal" holds credentials, with which the kubelet's probe fails every time: written without them`,
	})
	if strings.Contains(string(r.YAML), "s3cret") {
		t.Errorf("the file shows the password:\n%s", r.YAML)
	}
	checks := load(t, r.YAML)
	if got := checks["app-live"].Spec.(kinds.HTTPSpec).URL; got != "http://api.internal:8080/healthz" {
		t.Errorf("app-live: url %q, want http://api.internal:8080/healthz", got)
	}
	if got := checks["app-ready"].Spec.(probe.TCPSpec).Address; got != "db.internal:5432" {
		t.Errorf("app-ready: address %q, want db.internal:5432", got)
	}
}

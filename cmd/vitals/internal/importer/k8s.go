package importer

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/redact"
)

// The API server's defaults for a probe (SetDefaults_Probe), which are
// vitals' defaults too; they are written out all the same, so that the file
// says the timing it has.
const (
	k8sTimeout          = 1  // seconds
	k8sPeriod           = 10 // seconds
	k8sSuccessThreshold = 1
	k8sFailureThreshold = 3
)

// workload is an object of a manifest that runs containers.
type workload struct {
	ref        string // kind/name, as kubectl writes it: deployment/web
	name       string
	containers []*container
}

// container is what a container's probes and restart rules need of it.
type container struct {
	name    string
	ports   map[string]int64 // containerPort by name, for named ports
	env     map[string]envVar
	sidecar bool // an init container with restartPolicy: Always, which runs beside the others
	node    node
}

type envVar struct {
	value string
	from  bool // set from valueFrom, which a probe's command does not see
}

// probes are a container's probe fields, in the order the kubelet gates
// them, with the level and the check name suffix of each.
var probes = []struct{ field, level, suffix string }{
	{"startupProbe", "startup", "-startup"},
	{"livenessProbe", "live", "-live"},
	{"readinessProbe", "ready", "-ready"},
}

// Kubernetes makes a vitals.yaml from the probes of a manifest's containers:
// Pods, Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs
// (anything with a pod template) and Lists of them, in one or more YAML
// documents. choose names one container, as NAME or WORKLOAD/NAME; empty,
// it is every container of the file's one workload (a file with several
// needs choose: vitals runs in one pod). file names the manifest in
// messages.
//
// vitals runs in one container, with that container's command after --:
// its restartPolicy and restartPolicyRules (KEP-5307) are the service:
// block's restart and restart-rules, and a liveness or startup probe's own
// terminationGracePeriodSeconds is its check's stop-timeout. The kubelet's
// probes are of each container: with several containers, the file has the
// checks of all of them and no service:, and says what the kubelet does
// differently there.
func Kubernetes(file string, data []byte, choose string) (Result, error) {
	return newImporter(kinds.All).kubernetes(file, data, choose)
}

// kubernetes is Kubernetes with the kinds of im.
func (im *importer) kubernetes(file string, data []byte, choose string) (Result, error) {
	docs, err := parse(file, data)
	if err != nil {
		return Result{}, err
	}
	var workloads []*workload
	for _, d := range docs {
		ws, err := findWorkloads(d)
		if err != nil {
			return Result{}, err
		}
		workloads = append(workloads, ws...)
	}
	if len(workloads) == 0 {
		return Result{}, fmt.Errorf("%s: no Pod, Deployment, StatefulSet, DaemonSet, Job or CronJob with containers", file)
	}
	w, cs, err := chooseContainers(file, workloads, choose)
	if err != nil {
		return Result{}, err
	}
	var checks []check
	var localhost, names []string
	for _, c := range cs {
		names = append(names, c.name)
		cc, local, err := im.containerChecks(w, c, len(cs) > 1)
		if err != nil {
			return Result{Warnings: im.warnings}, err
		}
		checks, localhost = append(checks, cc...), append(localhost, local...)
	}
	if len(localhost) > 0 {
		im.warnf("%s: no host, so the kubelet probes the pod IP: written as localhost, the pod seen from inside it", strings.Join(localhost, ", "))
	}
	written := 0
	for _, ch := range checks {
		if ch.kind != "" {
			written++
		}
	}
	switch {
	case written == 0 && len(cs) == 1:
		return Result{Warnings: im.warnings}, fmt.Errorf("%s: no probe of container %q could be carried over", file, cs[0].name)
	case written == 0:
		return Result{Warnings: im.warnings}, fmt.Errorf("%s: no probe of the containers of %s could be carried over", file, w.ref)
	case len(cs) == 1:
		header := []string{fmt.Sprintf("Made by vitals import k8s from %s: %s, container %s.", filepath.Base(file), w.ref, cs[0].name)}
		service, err := im.k8sRestart(cs[0])
		if err != nil {
			return Result{Warnings: im.warnings}, err
		}
		return im.finish(vitalsFile{header: header, services: service, checks: checks}), nil
	}
	header := []string{fmt.Sprintf("Made by vitals import k8s from %s: %s, containers %s.", filepath.Base(file), w.ref, strings.Join(names, ", "))}
	preamble := im.severalContainers(w, names, checks)
	for _, c := range cs {
		if !c.sidecar && (!c.node.get("restartPolicy").absent() || !c.node.get("restartPolicyRules").absent()) {
			im.warnf("container %q: restartPolicy and restartPolicyRules are left out: vitals runs in one container, and the kubelet applies them to each", c.name)
		}
	}
	return im.finish(vitalsFile{header: header, preamble: preamble, checks: checks}), nil
}

// k8sPolicies are the kubelet's restart policies, as vitals's.
var k8sPolicies = map[string]string{"Always": config.RestartAlways, "OnFailure": config.RestartOnFailure, "Never": config.RestartNever}

// k8sRestart writes the service: block from a container's own restartPolicy
// and restartPolicyRules (KEP-5307): where the kubelet restarted the
// container, vitals restarts the workload inside it. The pod's
// restartPolicy is left to the kubelet, which applies it to vitals's exit,
// vitals's code being the workload's; so is a sidecar's restartPolicy:
// Always, which makes it one, and which no rule changes. None: no block,
// and the workload is the command after --.
func (im *importer) k8sRestart(c *container) ([]string, error) {
	policyNode, rulesNode := c.node.get("restartPolicy"), c.node.get("restartPolicyRules")
	if c.sidecar {
		if !rulesNode.absent() {
			im.warnf("container %q: restartPolicyRules are left out: the kubelet does not apply them to a sidecar, which it restarts after any exit", c.name)
		}
		return nil, nil
	}
	if policyNode.absent() && rulesNode.absent() {
		return nil, nil
	}
	given, err := policyNode.str()
	if err != nil {
		return nil, err
	}
	policy, ok := k8sPolicies[given]
	switch {
	case given == "":
		return nil, policyNode.errorf("required with restartPolicyRules")
	case !ok:
		return nil, policyNode.errorf("%q: want Always, OnFailure or Never", given)
	}
	items, err := rulesNode.items()
	if err != nil {
		return nil, err
	}
	var rules []exitRule
	for _, it := range items {
		r, err := im.k8sRule(c, it)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	what := "restartPolicy"
	if len(rules) > 0 {
		what += " and restartPolicyRules"
	}
	var w writer
	w.line(0, "service:")
	w.comment(1, "Container "+c.name+"'s "+what+": vitals restarts")
	w.comment(1, "the workload inside the container, where the kubelet restarted the")
	w.comment(1, "container. Its command is the container's, given after --.")
	w.field(1, field{key: "restart", value: policy, raw: true, note: "restartPolicy: " + given})
	if len(rules) > 0 {
		w.field(1, rulesField(rules))
	}
	return strings.Split(strings.TrimSuffix(w.b.String(), "\n"), "\n"), nil
}

// k8sRule reads one of a container's restartPolicyRules, {action,
// exitCodes: {operator, values}}. Restart restarts the workload;
// RestartAllContainers (KEP-5532) makes vitals exit with the code, for the
// kubelet's own rule on the container to restart them all.
func (im *importer) k8sRule(c *container, v node) (exitRule, error) {
	f, unknown, err := v.fields("action", "exitCodes")
	if err != nil {
		return exitRule{}, err
	}
	for _, k := range unknown {
		im.warnf("container %q: restartPolicyRules: %q is not a field vitals import knows: left out", c.name, k)
	}
	var r exitRule
	switch action, err := f["action"].str(); {
	case err != nil:
		return r, err
	case action == "Restart":
		r.action = "restart"
	case action == "RestartAllContainers":
		r.action, r.note = "exit", "RestartAllContainers: the kubelet's rule restarts them all"
		im.warnf("container %q: restartPolicyRules action RestartAllContainers is written as exit: vitals exits with the code, and the kubelet's own rule on the container restarts all the containers", c.name)
	case action == "":
		return r, f["action"].errorf("required")
	default:
		return r, f["action"].errorf("%q: want Restart or RestartAllContainers", action)
	}
	codes, unknown, err := f["exitCodes"].fields("operator", "values")
	if err != nil {
		return r, err
	}
	for _, k := range unknown {
		im.warnf("container %q: restartPolicyRules exitCodes: %q is not a field vitals import knows: left out", c.name, k)
	}
	switch op, err := codes["operator"].str(); {
	case err != nil:
		return r, err
	case op == "In":
		r.operator = "in"
	case op == "NotIn":
		r.operator = "not-in"
	case op == "":
		return r, codes["operator"].errorf("required")
	default:
		return r, codes["operator"].errorf("%q: want In or NotIn", op)
	}
	values, err := codes["values"].items()
	if err != nil {
		return r, err
	}
	if len(values) == 0 {
		return r, codes["values"].errorf("required: the exit codes the rule is about")
	}
	for _, v := range values {
		code, err := v.integer()
		if err != nil {
			return r, err
		}
		if code < 0 || code > 255 {
			return r, v.errorf("%d is not an exit code (0 to 255)", code)
		}
		r.codes = append(r.codes, code)
	}
	return r, nil
}

// containerChecks makes the checks of one container's probes, and names
// those that had no host (localhost here). A container with no probe is an
// error when it is the one imported, and a warning when it is one of
// several.
func (im *importer) containerChecks(w *workload, c *container, several bool) (checks []check, localhost []string, err error) {
	for _, p := range probes {
		v := c.node.get(p.field)
		if v.absent() {
			continue
		}
		name := im.checkName(c.name+p.suffix, fmt.Sprintf("the %s of container %q", p.field, c.name))
		ch, defaultHost, err := im.k8sProbe(c, p.field, p.level, name, v, several)
		if err != nil {
			return nil, nil, err
		}
		if defaultHost {
			localhost = append(localhost, name)
		}
		checks = append(checks, ch)
	}
	switch {
	case len(checks) > 0:
	case several:
		im.warnf("container %q of %s has no startupProbe, livenessProbe or readinessProbe: no check of it is written", c.name, w.ref)
	default:
		return nil, nil, c.node.errorf("container %q of %s has no startupProbe, livenessProbe or readinessProbe", c.name, w.ref)
	}
	return checks, localhost, nil
}

// severalContainers says, as the file's preamble and as warnings, what the
// kubelet does with the probes of several containers that one vitals does
// not: vitals runs in one container (each has an image of its own), so the file has no service:, and its
// checks all run in the container vitals runs in and count for its
// endpoints. An exec check gets a note of the container it was of.
func (im *importer) severalContainers(w *workload, names []string, checks []check) []string {
	im.warnf("%s has %d containers (%s), and vitals runs in one of them (each has an image of its own): the file has the checks of all of them and no service:; run vitals in one container, with that container's command after --",
		w.ref, len(names), strings.Join(names, ", "))
	var exec, live []string
	for i := range checks {
		c := &checks[i]
		if c.kind == "exec" {
			exec = append(exec, c.name)
			c.after = append(c.after, fmt.Sprintf("The kubelet ran this in container %s; vitals runs it where vitals runs.", c.container))
		}
		// An exec live check differs both ways.
		if c.kind != "" && c.level == "live" {
			live = append(live, c.name)
		}
	}
	preamble := []string{
		fmt.Sprintf("%s has %d containers: %s. vitals supervises one", w.ref, len(names), strings.Join(names, ", ")),
		"workload, so this file has no service:. Run vitals in one container,",
		"with its command after -- (vitals run --config vitals.yaml -- COMMAND).",
		"The checks of every container are here; they reach the others over the",
		"pod's network, as localhost.",
	}
	if len(exec) > 0 {
		im.warnf("%s: the kubelet runs an exec probe in its own container; vitals runs it in the container vitals runs in", strings.Join(exec, ", "))
		preamble = append(preamble, "An exec check runs in the container vitals runs in, not in its own.")
	}
	if len(live) > 0 {
		im.warnf("%s: the kubelet restarts the container whose liveness probe fails; here any live check fails /livez of the container vitals runs in", strings.Join(live, ", "))
		preamble = append(preamble, "A live check that fails fails /livez of the container vitals runs in:",
			"the kubelet restarted only the container whose probe failed.")
	}
	return preamble
}

// findWorkloads finds the objects of a document that run containers: any
// object with a pod spec where a Pod, a workload (spec.template) or a
// CronJob (spec.jobTemplate) has it, and the items of a List.
func findWorkloads(doc node) ([]*workload, error) {
	if _, err := doc.entries(); err != nil {
		return nil, fmt.Errorf("not a Kubernetes manifest: %w", err)
	}
	kind, err := doc.get("kind").str()
	if err != nil {
		return nil, err
	}
	if kind == "List" {
		items, err := doc.get("items").items()
		if err != nil {
			return nil, err
		}
		var out []*workload
		for _, it := range items {
			ws, err := findWorkloads(it)
			if err != nil {
				return nil, err
			}
			out = append(out, ws...)
		}
		return out, nil
	}
	name, err := doc.get("metadata").get("name").str()
	if err != nil {
		return nil, err
	}
	for _, path := range [][]string{
		{"spec"},
		{"spec", "template", "spec"},
		{"spec", "jobTemplate", "spec", "template", "spec"},
		{"template", "spec"},
	} {
		spec := doc
		for _, k := range path {
			spec = spec.get(k)
		}
		if spec.get("containers").absent() {
			continue
		}
		w := &workload{ref: strings.ToLower(kind) + "/" + name, name: name}
		if name == "" {
			w.ref = strings.ToLower(kind)
		}
		if err := w.readContainers(spec); err != nil {
			return nil, err
		}
		return []*workload{w}, nil
	}
	return nil, nil
}

// readContainers reads a pod spec's containers, and its init containers
// that run beside them (restartPolicy: Always, the native sidecars), the only
// ones that may have probes.
func (w *workload) readContainers(spec node) error {
	for _, list := range []string{"containers", "initContainers"} {
		items, err := spec.get(list).items()
		if err != nil {
			return err
		}
		for _, it := range items {
			if list == "initContainers" {
				policy, err := it.get("restartPolicy").str()
				if err != nil {
					return err
				}
				if policy != "Always" {
					continue
				}
			}
			c, err := readContainer(it)
			if err != nil {
				return err
			}
			c.sidecar = list == "initContainers"
			w.containers = append(w.containers, c)
		}
	}
	return nil
}

func readContainer(v node) (*container, error) {
	if _, err := v.entries(); err != nil {
		return nil, err
	}
	name, err := v.get("name").str()
	if err != nil {
		return nil, err
	}
	c := &container{name: name, node: v, ports: map[string]int64{}, env: map[string]envVar{}}
	ports, err := v.get("ports").items()
	if err != nil {
		return nil, err
	}
	for _, p := range ports {
		pname, err := p.get("name").str()
		if err != nil {
			return nil, err
		}
		if pname == "" {
			continue
		}
		n, err := p.get("containerPort").integer()
		if err != nil {
			return nil, err
		}
		c.ports[pname] = n
	}
	env, err := v.get("env").items()
	if err != nil {
		return nil, err
	}
	for _, e := range env {
		ename, err := e.get("name").str()
		if err != nil {
			return nil, err
		}
		value, err := e.get("value").str()
		if err != nil {
			return nil, err
		}
		c.env[ename] = envVar{value: value, from: !e.get("valueFrom").absent()}
	}
	return c, nil
}

// chooseContainers finds the containers to import: the one named, or,
// when none is, every container of the file's one workload.
func chooseContainers(file string, workloads []*workload, choose string) (*workload, []*container, error) {
	type candidate struct {
		w *workload
		c *container
	}
	var all, matches []candidate
	var running []*workload // those with containers
	wantWorkload, wantName, qualified := strings.Cut(choose, "/")
	if !qualified {
		wantWorkload, wantName = "", choose
	}
	for _, w := range workloads {
		if len(w.containers) > 0 {
			running = append(running, w)
		}
		for _, c := range w.containers {
			all = append(all, candidate{w, c})
			if c.name == wantName && (!qualified || w.name == wantWorkload) {
				matches = append(matches, candidate{w, c})
			}
		}
	}
	list := func(cs []candidate) string {
		names := make([]string, len(cs))
		oneWorkload := true
		for i, c := range cs {
			names[i] = c.c.name
			oneWorkload = oneWorkload && c.w == cs[0].w
		}
		if oneWorkload {
			return fmt.Sprintf("%s (%s)", strings.Join(names, ", "), cs[0].w.ref)
		}
		for i, c := range cs {
			names[i] = fmt.Sprintf("%s (%s)", c.c.name, c.w.ref)
		}
		return strings.Join(names, ", ")
	}
	switch {
	case len(all) == 0:
		return nil, nil, fmt.Errorf("%s: %s has no containers", file, workloads[0].ref)
	case choose == "" && len(running) == 1:
		return running[0], running[0].containers, nil
	case choose == "":
		refs := make([]string, len(running))
		for i, w := range running {
			refs[i] = w.ref
		}
		return nil, nil, fmt.Errorf("%s has %d workloads (%s), and vitals runs in one pod: --container must name a container of one, as NAME or WORKLOAD/NAME: %s",
			file, len(running), strings.Join(refs, ", "), list(all))
	case len(matches) == 0:
		return nil, nil, fmt.Errorf("%s has no container %q; its containers are %s", file, choose, list(all))
	case len(matches) > 1:
		refs := make([]string, len(matches))
		for i, m := range matches {
			refs[i] = m.w.ref
		}
		return nil, nil, fmt.Errorf("%s has %d containers named %q, in %s: give --container WORKLOAD/%s, such as %s/%s",
			file, len(matches), choose, strings.Join(refs, ", "), choose, matches[0].w.name, choose)
	}
	return matches[0].w, []*container{matches[0].c}, nil
}

// k8sHandler is a handler of a probe, with how it reads into a kinds.Peer.
// skip says why a probe is left out, defaultHost that it had no host and
// got localhost.
type k8sHandler struct {
	name string
	read func(im *importer, c *container, name string, v node) (p kinds.Peer, defaultHost bool, skip string, err error)
}

// k8sHandlers are the handlers of a probe, as the kubelet's API lists
// them. The kind one is imported as is the table's (kinds.Table.Kubelet).
var k8sHandlers = []k8sHandler{
	{"exec", (*importer).k8sExec},
	{"httpGet", (*importer).k8sHTTP},
	{"tcpSocket", (*importer).k8sTCP},
	{"grpc", (*importer).k8sGRPC},
}

// k8sProbe makes a check of one probe. A probe vitals cannot run (a
// handler that no kind of the table takes, a named port the container does
// not have) becomes a note in the file and a warning. defaultHost says the
// probe had no host, and got localhost.
func (im *importer) k8sProbe(c *container, probeField, level, name string, v node, several bool) (ch check, defaultHost bool, err error) {
	keys := []string{"initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
		"failureThreshold", "terminationGracePeriodSeconds"}
	for _, h := range k8sHandlers {
		keys = append(keys, h.name)
	}
	f, unknown, err := v.fields(keys...)
	if err != nil {
		return check{}, false, err
	}
	for _, k := range unknown {
		im.warnf("%s: %s.%s is not a field vitals import knows: left out", name, probeField, k)
	}
	var given []k8sHandler
	var names []string
	for _, h := range k8sHandlers {
		if !f[h.name].absent() {
			given, names = append(given, h), append(names, h.name)
		}
	}
	switch len(given) {
	case 0:
		return check{}, false, v.errorf("no handler: a probe has one of exec, httpGet, tcpSocket and grpc")
	case 1:
	default:
		return check{}, false, v.errorf("a probe has one handler, not %s", strings.Join(names, " and "))
	}
	timing, err := im.k8sTiming(f, name)
	if err != nil {
		return check{}, false, err
	}

	h := given[0]
	k := im.kinds.Kubelet(h.name)
	if k == nil {
		return im.leftOut(name, "left out: vitals has no kind for a "+h.name+" probe"), false, nil
	}
	peer, defaultHost, skip, err := h.read(im, c, name, f[h.name])
	if err != nil {
		return check{}, false, err
	}
	if skip != "" {
		return im.leftOut(name, skip), false, nil
	}
	spec, err := im.block(k, peer, f[h.name])
	if err != nil {
		return check{}, false, err
	}
	ch = check{name: name, level: level, kind: k.Name, spec: spec, timing: timing, container: c.name}
	if err := im.k8sGrace(&ch, f["terminationGracePeriodSeconds"], probeField, several); err != nil {
		return check{}, false, err
	}
	return ch, defaultHost, nil
}

// k8sGrace is a probe's own terminationGracePeriodSeconds (KEP-2238): the
// grace the kubelet gives the container it kills for the probe's failure,
// before it restarts it as its policy says. vitals does the same for the
// container it runs in: the check's on-failure is exit, which stops the
// workload within the check's stop-timeout, and vitals's exit is the
// container's, for the kubelet's policy. The containers of several are left
// to the kubelet: vitals stops none of them. A readiness probe has none:
// the API server refuses it.
func (im *importer) k8sGrace(c *check, v node, probeField string, several bool) error {
	if v.absent() {
		return nil
	}
	if probeField == "readinessProbe" || several {
		s, err := v.str()
		if err != nil {
			return err
		}
		why := "the API server refuses it, as a readiness probe kills nothing"
		if several {
			why = "the kubelet kills container " + c.container + ", which vitals does not run"
		}
		im.warnf("%s: %s.terminationGracePeriodSeconds %s is left out: %s", c.name, probeField, s, why)
		return nil
	}
	seconds, err := v.integer()
	if err != nil {
		return err
	}
	if seconds < 1 {
		return v.errorf("%d: must be 1 or more", seconds)
	}
	c.onFailure = field{key: "on-failure", value: config.OnFailureExit, raw: true, note: "the kubelet killed the container, with the probe's own grace"}
	c.stopTimeout = field{key: "stop-timeout", value: fmt.Sprintf("%ds", seconds), raw: true, note: probeField + ".terminationGracePeriodSeconds"}
	return nil
}

// leftOut is a check that is not written, but said: a warning, and a note
// in the file.
func (im *importer) leftOut(name, why string) check {
	im.warnf("%s: %s", name, why)
	return check{notes: []string{name + ": " + why}}
}

// k8sTiming is a probe's timing, as the API server defaults it. A timeout
// longer than the period is cut to it, which vitals requires.
func (im *importer) k8sTiming(f map[string]node, name string) ([]field, error) {
	seconds := func(key string, def int64) (int64, error) {
		n := f[key]
		if n.absent() {
			return def, nil
		}
		s, err := n.integer()
		switch {
		case err != nil:
			return 0, err
		case s < 0:
			return 0, n.errorf("%d is negative", s)
		case s == 0:
			return def, nil // the API server's defaulting treats 0 as unset
		}
		return s, nil
	}
	var t [5]int64
	for i, k := range []struct {
		key string
		def int64
	}{{"periodSeconds", k8sPeriod}, {"timeoutSeconds", k8sTimeout}, {"initialDelaySeconds", 0},
		{"successThreshold", k8sSuccessThreshold}, {"failureThreshold", k8sFailureThreshold}} {
		var err error
		if t[i], err = seconds(k.key, k.def); err != nil {
			return nil, err
		}
	}
	period, timeout, delay, success, failure := t[0], t[1], t[2], t[3], t[4]
	if timeout > period {
		im.warnf("%s: timeoutSeconds %d is longer than periodSeconds %d, which vitals refuses: written as timeout: %ds", name, timeout, period, period)
		timeout = period
	}
	return []field{
		{key: "period", value: fmt.Sprintf("%ds", period), raw: true},
		{key: "timeout", value: fmt.Sprintf("%ds", timeout), raw: true},
		{key: "initial-delay", value: fmt.Sprintf("%ds", delay), raw: true},
		{key: "success-threshold", value: strconv.FormatInt(success, 10), raw: true},
		{key: "failure-threshold", value: strconv.FormatInt(failure, 10), raw: true},
	}, nil
}

// k8sPort resolves a probe's port as the kubelet does (extractPort): a
// number, or the name of one of the container's ports, or, failing that, a
// number written as a string. skip says why a name could not be resolved.
func k8sPort(c *container, handler string, v node) (port int64, skip string, err error) {
	if v.absent() {
		return 0, "", v.errorf("required")
	}
	port, name, err := v.intOrName()
	if err != nil {
		return 0, "", err
	}
	if name != "" {
		p, ok := c.ports[name]
		if !ok {
			p, err = strconv.ParseInt(name, 10, 64)
			if err != nil {
				return 0, fmt.Sprintf("left out: %s port %q is not a port of container %q", handler, name, c.name), nil
			}
		}
		port = p
	}
	if port < 1 || port > 65535 {
		return 0, "", v.errorf("%d is not a port (1 to 65535)", port)
	}
	return port, "", nil
}

// k8sHost is a probe's host, localhost when it has none: the kubelet probes
// the pod IP, and vitals runs in the pod. Credentials written in it
// (USER:PASSWORD@HOST) make the kubelet's probe fail every time, as its URL
// does not parse and its address names no host: they are cut off, and
// returned for leftOutCredentials to say so.
func k8sHost(v node) (host string, creds *url.Userinfo, defaulted bool, err error) {
	host, err = v.str()
	switch {
	case err != nil:
		return "", nil, false, err
	case host == "":
		return "localhost", nil, true, nil
	}
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		creds = url.User(host[:i])
		if user, password, ok := strings.Cut(host[:i], ":"); ok {
			creds = url.UserPassword(user, password)
		}
		host = host[i+1:]
	}
	return host, creds, false, nil
}

// leftOutCredentials says that the credentials of a probe's host, creds,
// are left out of its check, with the password masked: the file is no place
// for it in clear, and xxxxx in its place would be sent. hint says how to
// give them, where vitals can send them.
func (im *importer) leftOutCredentials(name, handler string, creds *url.Userinfo, host, hint string) {
	written := creds.Username()
	if _, ok := creds.Password(); ok {
		written += ":" + redact.Mask
	}
	im.warnf("%s: %s.host %q holds credentials, with which the kubelet's probe fails every time: written without them%s",
		name, handler, written+"@"+host, hint)
}

// k8sHTTP reads an httpGet handler: its URL as the kubelet forms it, its
// headers, and insecure for HTTPS, whose certificate the kubelet does not
// verify.
func (im *importer) k8sHTTP(c *container, name string, v node) (p kinds.Peer, defaultHost bool, skip string, err error) {
	f, unknown, err := v.fields("path", "port", "host", "scheme", "httpHeaders", "protocol")
	if err != nil {
		return p, false, "", err
	}
	for _, k := range unknown {
		im.warnf("%s: httpGet.%s is not a field vitals import knows: left out", name, k)
	}
	port, skip, err := k8sPort(c, "httpGet", f["port"])
	if err != nil || skip != "" {
		return p, false, skip, err
	}
	host, creds, defaultHost, err := k8sHost(f["host"])
	if err != nil {
		return p, false, "", err
	}
	scheme, err := f["scheme"].str()
	if err != nil {
		return p, false, "", err
	}
	insecure := false
	switch scheme {
	case "", "HTTP":
		scheme = "http"
	case "HTTPS":
		scheme, insecure = "https", true
		im.warnf("%s: scheme HTTPS, whose certificate the kubelet does not verify: written as insecure: true (give ca-file instead to verify it)", name)
	default:
		return p, false, "", f["scheme"].errorf("%q: want HTTP or HTTPS", scheme)
	}
	path, err := f["path"].str()
	if err != nil {
		return p, false, "", err
	}
	if path == "" {
		path = "/" // the API server's default
	}
	// The kubelet's formatURL: the path may carry a query; one that does
	// not parse is passed along as it is.
	u, perr := url.Parse(path)
	if perr != nil {
		u = &url.URL{Path: path}
	}
	u.Scheme, u.Host = scheme, net.JoinHostPort(host, strconv.FormatInt(port, 10))
	if creds != nil {
		// Go's client sends a URL's credentials as basic authentication.
		logIn := *u
		logIn.User = url.User(creds.Username())
		im.leftOutCredentials(name, "httpGet", creds, host, "; to log in, write url: "+
			strings.Replace(logIn.String(), "@", ":${PASSWORD}@", 1)+", with PASSWORD in vitals's environment")
	}

	p = kinds.Peer{URL: u.String(), Insecure: insecure}
	if insecure {
		p.InsecureNote = "the kubelet does not verify the certificate"
	}
	items, err := f["httpHeaders"].items()
	if err != nil {
		return p, false, "", err
	}
	for _, it := range items {
		hn, err := it.get("name").scalarStr()
		if err != nil {
			return p, false, "", err
		}
		hv, err := it.get("value").str()
		if err != nil {
			return p, false, "", err
		}
		if i := indexNamed(p.Headers, hn); i >= 0 {
			p.Headers[i].Values = append(p.Headers[i].Values, hv)
		} else {
			p.Headers = append(p.Headers, kinds.Named{Name: hn, Values: []string{hv}})
		}
	}
	if protocol, err := f["protocol"].str(); err != nil {
		return p, false, "", err
	} else if protocol == "HTTP2" {
		im.warnf("%s: httpGet.protocol HTTP2 (h2c) is left out: vitals asks in HTTP/1.1", name)
	}
	return p, defaultHost, "", nil
}

// k8sTCP reads a tcpSocket handler: the address it connects to.
func (im *importer) k8sTCP(c *container, name string, v node) (p kinds.Peer, defaultHost bool, skip string, err error) {
	f, unknown, err := v.fields("port", "host")
	if err != nil {
		return p, false, "", err
	}
	for _, k := range unknown {
		im.warnf("%s: tcpSocket.%s is not a field vitals import knows: left out", name, k)
	}
	port, skip, err := k8sPort(c, "tcpSocket", f["port"])
	if err != nil || skip != "" {
		return p, false, skip, err
	}
	host, creds, defaultHost, err := k8sHost(f["host"])
	if err != nil {
		return p, false, "", err
	}
	if creds != nil {
		im.leftOutCredentials(name, "tcpSocket", creds, host, "")
	}
	return kinds.Peer{Address: net.JoinHostPort(host, strconv.FormatInt(port, 10))}, defaultHost, "", nil
}

// k8sExec reads an exec handler: its command, with $(VAR) expanded as the
// kubelet does.
func (im *importer) k8sExec(c *container, name string, v node) (p kinds.Peer, defaultHost bool, skip string, err error) {
	f, unknown, err := v.fields("command")
	if err != nil {
		return p, false, "", err
	}
	for _, k := range unknown {
		im.warnf("%s: exec.%s is not a field vitals import knows: left out", name, k)
	}
	words, err := f["command"].strings()
	if err != nil {
		return p, false, "", err
	}
	if len(words) == 0 || words[0] == "" {
		return p, false, "", f["command"].errorf("required, with the program as its first word")
	}
	said := map[string]bool{}
	for i, w := range words {
		var refs []string
		words[i], refs = expandK8s(w, c.env)
		for _, r := range refs {
			if said[r] {
				continue
			}
			said[r] = true
			if e, ok := c.env[r]; ok && e.from {
				im.warnf("%s: exec command's $(%s) is set by valueFrom, which the kubelet does not resolve in a probe's command: it is empty there, and here", name, r)
			} else if !ok {
				im.warnf("%s: exec command's $(%s) is no variable of container %q: kept as written, as the kubelet does", name, r, c.name)
			}
		}
	}
	return kinds.Peer{Command: words}, false, "", nil
}

// expandK8s expands $(VAR) in a word of a probe's command as the kubelet
// does (ExpandContainerCommandOnlyStatic, third_party/forked/golang/
// expansion): from the container's env, where a variable set by valueFrom
// is empty; $$ is $; a reference to no variable, or one not closed, stays
// as written. refs are the variables referred to.
func expandK8s(s string, env map[string]envVar) (string, []string) {
	var b strings.Builder
	var refs []string
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch next := s[i+1]; next {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			refs = append(refs, name)
			if e, ok := env[name]; ok {
				b.WriteString(e.value)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
			b.WriteByte(next)
			i++
		}
	}
	return b.String(), refs
}

// k8sGRPC reads a grpc handler, {port, service}. The kubelet calls
// grpc.health.v1 Check on the pod IP, which a grpc probe has no host to
// change, in plaintext, for the service named, or for "" when none is (the
// server as a whole). The port is a number: the API has no named port for
// grpc.
func (im *importer) k8sGRPC(_ *container, name string, v node) (p kinds.Peer, defaultHost bool, skip string, err error) {
	f, unknown, err := v.fields("port", "service")
	if err != nil {
		return p, false, "", err
	}
	for _, k := range unknown {
		im.warnf("%s: grpc.%s is not a field vitals import knows: left out", name, k)
	}
	if f["port"].absent() {
		return p, false, "", f["port"].errorf("required")
	}
	port, err := f["port"].integer()
	if err != nil {
		return p, false, "", err
	}
	if port < 1 || port > 65535 {
		return p, false, "", f["port"].errorf("%d is not a port (1 to 65535)", port)
	}
	service, err := f["service"].str()
	if err != nil {
		return p, false, "", err
	}
	return kinds.Peer{Address: net.JoinHostPort("localhost", strconv.FormatInt(port, 10)), Service: service}, true, "", nil
}

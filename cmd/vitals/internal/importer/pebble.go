package importer

import (
	"cmp"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/probe"
)

// Pebble's defaults (internals/plan/plan.go), for what a layer leaves out.
const (
	pebblePeriod    = 10 * time.Second
	pebbleTimeout   = 3 * time.Second
	pebbleThreshold = 3 // failures in a row, "to avoid flapping due to glitches"
)

// pebbleStatus is what a Pebble http check passes on: 2xx, where vitals
// (and the kubelet) pass 200-399 by default.
const pebbleStatus = "200-299"

// pebbleService is one service of the layer: the context an exec check may
// run in, what it does when a check fails, and its fields, for the service:
// block.
type pebbleService struct {
	name           string
	f              map[string]node // its fields, by name
	environment    []pair
	workingDir     string
	user, group    string // user or user-id, group or group-id
	onCheckFailure []entry
}

// Pebble makes a vitals.yaml from a Pebble layer: its checks, with their
// level, timing and kind and what its services do when they fail, and its
// service as the workload vitals runs (several as comments). file names the
// layer in messages.
func Pebble(file string, data []byte) (Result, error) {
	im := newImporter()
	docs, err := parse(file, data)
	switch {
	case err != nil:
		return Result{}, err
	case len(docs) == 0:
		return Result{}, fmt.Errorf("%s: the file is empty: a Pebble layer has checks:", file)
	case len(docs) > 1:
		return Result{}, docs[1].errorf("a Pebble layer is one YAML document, not %d", len(docs))
	}
	// A layer has more (summary, description, log-targets), which no check
	// needs.
	top, _, err := docs[0].fields("services", "checks")
	if err != nil {
		return Result{}, fmt.Errorf("not a Pebble layer: %w", err)
	}
	services, err := im.pebbleServices(top["services"])
	if err != nil {
		return Result{}, err
	}
	entries, err := top["checks"].entries()
	if err != nil {
		return Result{}, err
	}
	if len(entries) == 0 {
		return Result{}, docs[0].errorf("no checks: a Pebble layer to import has checks:")
	}
	var checks []check
	inLayer := map[string]bool{}
	written := map[string]int{} // a check's Pebble name → its index in checks
	for _, e := range entries {
		inLayer[e.key] = true
		c, ok, err := im.pebbleCheck(e.key, e.val, services)
		if err != nil {
			return Result{Warnings: im.warnings}, err
		}
		if ok {
			written[e.key] = len(checks)
			checks = append(checks, c)
		}
	}
	if len(checks) == 0 {
		return Result{Warnings: im.warnings}, fmt.Errorf("%s: no check could be carried over", file)
	}
	preamble, service, err := im.supervision(services, checks, inLayer, written)
	if err != nil {
		return Result{Warnings: im.warnings}, err
	}
	header := []string{
		"Made by vitals import pebble from " + filepath.Base(file) + ".",
		"Pebble runs a check first one period after it starts, and reads it as up",
		"until then; vitals runs it at once, and it is pending until it passes.",
	}
	return im.finish(header, preamble, service, checks), nil
}

// pebbleServiceFields are the fields of a Pebble service.
var pebbleServiceFields = []string{"override", "summary", "description", "startup", "command",
	"after", "before", "requires", "environment", "user", "user-id", "group", "group-id", "working-dir",
	"on-success", "on-failure", "on-check-failure", "backoff-delay", "backoff-factor", "backoff-limit", "kill-delay"}

// pebbleServices reads the layer's services.
func (im *importer) pebbleServices(v node) ([]*pebbleService, error) {
	entries, err := v.entries()
	if err != nil {
		return nil, err
	}
	var out []*pebbleService
	for _, e := range entries {
		f, unknown, err := e.val.fields(pebbleServiceFields...)
		if err != nil {
			return nil, err
		}
		for _, k := range unknown {
			im.warnf("service %q: %q is not a field vitals import knows: left out", e.key, k)
		}
		s := &pebbleService{name: e.key, f: f}
		if s.environment, err = stringPairs(f["environment"]); err != nil {
			return nil, err
		}
		if s.workingDir, err = f["working-dir"].str(); err != nil {
			return nil, err
		}
		if s.user, s.group, err = pebbleUser(f); err != nil {
			return nil, err
		}
		if s.onCheckFailure, err = f["on-check-failure"].entries(); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// pebbleUser is who an exec check or a service runs as, by name or id.
func pebbleUser(f map[string]node) (user, group string, err error) {
	for _, k := range []string{"user", "user-id"} {
		if s, err := f[k].str(); err != nil {
			return "", "", err
		} else if s != "" && user == "" {
			user = s
		}
	}
	for _, k := range []string{"group", "group-id"} {
		if s, err := f[k].str(); err != nil {
			return "", "", err
		} else if s != "" && group == "" {
			group = s
		}
	}
	return user, group, nil
}

// stringPairs reads a mapping of names to single values, in the file's
// order.
func stringPairs(v node) ([]pair, error) {
	entries, err := v.entries()
	if err != nil {
		return nil, err
	}
	var out []pair
	for _, e := range entries {
		s, err := e.val.str()
		if err != nil {
			return nil, err
		}
		out = append(out, pair{e.key, []string{s}})
	}
	return out, nil
}

// pebbleCheck reads one check of the layer. It reports false, with a
// warning, for a check it cannot write: one with no kind, which only merges
// into a check of another layer.
func (im *importer) pebbleCheck(raw string, v node, services []*pebbleService) (check, bool, error) {
	subject := fmt.Sprintf("check %q", raw)
	f, unknown, err := v.fields("override", "level", "startup", "period", "timeout", "threshold", "http", "tcp", "exec")
	if err != nil {
		return check{}, false, err
	}
	for _, k := range unknown {
		im.warnf("%s: %q is not a field vitals import knows: left out", subject, k)
	}
	var kinds []string
	for _, k := range []string{"http", "tcp", "exec"} {
		if !f[k].absent() {
			kinds = append(kinds, k)
		}
	}
	switch len(kinds) {
	case 0:
		im.warnf("%s has no http, tcp or exec (a check that merges into another layer's?): left out", subject)
		return check{}, false, nil
	case 1:
	default:
		return check{}, false, v.errorf("a check has one of http, tcp and exec, not %s", strings.Join(kinds, " and "))
	}
	c := check{name: im.checkName(raw, subject), kind: kinds[0]}

	level, err := f["level"].str()
	if err != nil {
		return check{}, false, err
	}
	switch level {
	case "alive":
		c.level = "live"
	case "ready":
		c.level = "ready"
	case "":
		c.level = "ready"
		c.notes = append(c.notes, "Pebble: no level, so only /v1/health without ?level counted it; here it is",
			"ready, vitals' default, and /readyz counts it.")
		im.warnf("%s has no level: written as ready, whose failure fails /readyz (Pebble counted it only in /v1/health without ?level)", subject)
	default:
		return check{}, false, f["level"].errorf("%q: want alive or ready", level)
	}

	startup, err := f["startup"].str()
	if err != nil {
		return check{}, false, err
	}
	switch startup {
	case "", "enabled":
	case "disabled":
		c.notes = append(c.notes, "Pebble: startup: disabled, so it ran only after pebble start-checks;",
			"vitals has no such switch and runs it from the start.")
		im.warnf("%s has startup: disabled, which vitals has no equivalent of: the check runs from the start (noted in the file)", subject)
	default:
		return check{}, false, f["startup"].errorf("%q: want enabled or disabled", startup)
	}

	switch c.kind {
	case "http":
		c.spec, err = im.pebbleHTTP(f["http"], subject)
	case "tcp":
		c.spec, err = im.pebbleTCP(f["tcp"], subject)
	case "exec":
		c.spec, err = im.pebbleExec(f["exec"], subject, services)
	}
	if err != nil {
		return check{}, false, err
	}

	period, err := pebbleDuration(f["period"], pebblePeriod, false)
	if err != nil {
		return check{}, false, err
	}
	timeout, err := pebbleDuration(f["timeout"], pebbleTimeout, false)
	if err != nil {
		return check{}, false, err
	}
	if timeout > period {
		im.warnf("%s: timeout %s is longer than period %s, which Pebble cuts to the period without a word and vitals refuses: written as timeout: %s",
			subject, durationText(timeout), durationText(period), durationText(period))
		timeout = period
	}
	threshold := int64(pebbleThreshold)
	if t := f["threshold"]; !t.absent() {
		if threshold, err = t.integer(); err != nil {
			return check{}, false, err
		}
		switch {
		case threshold == 0:
			threshold = pebbleThreshold
		case threshold < 0:
			im.warnf("%s: threshold %d is below 1, so Pebble acts on the first failure: written as failure-threshold: 1", subject, threshold)
			threshold = 1
		}
	}
	c.timing = []field{
		{key: "period", value: durationText(period), raw: true},
		{key: "timeout", value: durationText(timeout), raw: true},
		{key: "failure-threshold", value: strconv.FormatInt(threshold, 10), raw: true},
	}
	return c, true, nil
}

// pebbleDuration reads a Go duration, as Pebble does: more than 0, or 0 and
// more when zero is set (a service's delays, which Pebble takes as 0).
func pebbleDuration(v node, def time.Duration, zero bool) (time.Duration, error) {
	if v.absent() {
		return def, nil
	}
	s, err := v.str()
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, v.errorf("%q is not a duration such as 10s, 500ms or 1m30s", s)
	case d < 0 && zero:
		return 0, v.errorf("%s: must not be negative", s)
	case d <= 0 && !zero:
		return 0, v.errorf("%s: must be more than 0", s)
	}
	return d, nil
}

func (im *importer) pebbleHTTP(v node, subject string) ([]field, error) {
	f, unknown, err := v.fields("url", "headers")
	if err != nil {
		return nil, err
	}
	for _, k := range unknown {
		im.warnf("%s: http: %q is not a field vitals import knows: left out", subject, k)
	}
	url, err := f["url"].str()
	if err != nil {
		return nil, err
	}
	if url == "" {
		return nil, f["url"].errorf("required")
	}
	headers, err := stringPairs(f["headers"])
	if err != nil {
		return nil, err
	}
	spec := []field{
		{key: "url", value: url},
		{key: "status", value: pebbleStatus, note: "Pebble passes 2xx only"},
	}
	h := http.Header{}
	if len(headers) > 0 {
		spec = append(spec, field{key: "headers", pairs: headers})
		for _, p := range headers {
			h[p.name] = p.values
			if http.CanonicalHeaderKey(p.name) == "Host" {
				// Go's client takes the host from the URL and skips a Host
				// header; vitals, as the kubelet, makes it the virtual host.
				im.warnf("%s: Pebble did not send its Host header (Go's client takes the host from the URL); vitals sends it, as the virtual host", subject)
			}
		}
	}
	if _, err := probe.HTTP(probe.HTTPSpec{URL: url, Header: h, Status: pebbleStatus}); err != nil {
		return nil, v.errorf("%s", strings.TrimPrefix(err.Error(), "http probe: "))
	}
	return spec, nil
}

func (im *importer) pebbleTCP(v node, subject string) ([]field, error) {
	f, unknown, err := v.fields("port", "host")
	if err != nil {
		return nil, err
	}
	for _, k := range unknown {
		im.warnf("%s: tcp: %q is not a field vitals import knows: left out", subject, k)
	}
	p := f["port"]
	if p.absent() {
		return nil, p.errorf("required")
	}
	port, err := p.integer()
	if err != nil {
		return nil, err
	}
	if port < 1 || port > 65535 {
		return nil, p.errorf("%d is not a port (1 to 65535)", port)
	}
	host, err := f["host"].str()
	if err != nil {
		return nil, err
	}
	if host == "" {
		host = "localhost" // Pebble's default
	}
	address := net.JoinHostPort(host, strconv.FormatInt(port, 10))
	if _, err := probe.TCP(probe.TCPSpec{Address: address}); err != nil {
		return nil, v.errorf("%s", strings.TrimPrefix(err.Error(), "tcp probe: "))
	}
	return []field{{key: "address", value: address}}, nil
}

func (im *importer) pebbleExec(v node, subject string, services []*pebbleService) ([]field, error) {
	f, unknown, err := v.fields("command", "service-context", "environment", "working-dir", "user", "user-id", "group", "group-id")
	if err != nil {
		return nil, err
	}
	for _, k := range unknown {
		im.warnf("%s: exec: %q is not a field vitals import knows: left out", subject, k)
	}
	line, err := f["command"].str()
	if err != nil {
		return nil, err
	}
	words, err := splitWords(line)
	switch {
	case err != nil:
		return nil, f["command"].errorf("%q: %v", line, err)
	case len(words) == 0:
		return nil, f["command"].errorf("required")
	}

	// A service context lends its environment, working directory and user;
	// the check's own settings win.
	var env []pair
	var dir, user, group string
	if name, err := f["service-context"].str(); err != nil {
		return nil, err
	} else if name != "" {
		if i := slices.IndexFunc(services, func(s *pebbleService) bool { return s.name == name }); i >= 0 {
			s := services[i]
			env = append(env, s.environment...)
			dir, user, group = s.workingDir, s.user, s.group
		} else {
			im.warnf("%s: service-context %q is a service this layer does not define: its environment, working-dir, user and group are not carried over", subject, name)
		}
	}
	own, err := stringPairs(f["environment"])
	if err != nil {
		return nil, err
	}
	for _, p := range own {
		i := indexPair(env, p.name)
		if i < 0 {
			env = append(env, p)
		} else {
			env[i] = p
		}
	}
	if d, err := f["working-dir"].str(); err != nil {
		return nil, err
	} else if d != "" {
		dir = d
	}
	u, g, err := pebbleUser(f)
	if err != nil {
		return nil, err
	}
	user, group = cmp.Or(u, user), cmp.Or(g, group)
	if user != "" || group != "" {
		var who []string
		if user != "" {
			who = append(who, fmt.Sprintf("user %q", user))
		}
		if group != "" {
			who = append(who, fmt.Sprintf("group %q", group))
		}
		im.warnf("%s: exec runs as %s in Pebble; vitals runs the command as its own user: left out", subject, strings.Join(who, " and "))
	}

	spec := []field{{key: "command", list: words}}
	if len(env) > 0 {
		spec = append(spec, field{key: "env", pairs: env})
	}
	if dir != "" {
		spec = append(spec, field{key: "dir", value: dir})
	}
	return spec, nil
}

func indexPair(ps []pair, name string) int {
	for i, p := range ps {
		if p.name == name {
			return i
		}
	}
	return -1
}

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

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
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
// run in, what it does when a check fails, and its fields, for its entry of
// services:.
type pebbleService struct {
	name           string
	f              map[string]node // its fields, by name
	environment    []kinds.Named
	workingDir     string
	user, group    string // user or user-id, group or group-id
	onCheckFailure []entry
}

// Pebble makes a vitals.yaml from a Pebble layer: its checks, with their
// level, timing and kind and what its services do when they fail, and its
// services, which vitals runs. Result.Layer is the Pebble layer that runs
// that vitals under Pebble: the file ends with it as comments, or, when
// layerFile names where it is written, with a line that says so. file names
// the layer in messages.
func Pebble(file string, data []byte, layerFile string) (Result, error) {
	return newImporter(kinds.All).pebble(file, data, layerFile)
}

// pebble is Pebble with the kinds of im.
func (im *importer) pebble(file string, data []byte, layerFile string) (Result, error) {
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
	lines, stop, ex, err := im.supervision(services, checks, inLayer, written)
	if err != nil {
		return Result{Warnings: im.warnings}, err
	}
	source := filepath.Base(file)
	header := []string{
		"Made by vitals import pebble from " + source + ".",
		"Pebble runs a check first one period after it starts, and reads it as up",
		"until then; vitals runs it at once, and it is pending until it passes.",
	}
	layer := pebbleRunLayer(source, services, stop, ex)
	r := im.finish(vitalsFile{header: header, services: lines, checks: checks, trailer: pebbleLayerTrailer(layer, layerFile)})
	r.Layer = layer
	return r, nil
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
func stringPairs(v node) ([]kinds.Named, error) {
	entries, err := v.entries()
	if err != nil {
		return nil, err
	}
	var out []kinds.Named
	for _, e := range entries {
		s, err := e.val.str()
		if err != nil {
			return nil, err
		}
		out = append(out, kinds.Named{Name: e.key, Values: []string{s}})
	}
	return out, nil
}

// pebbleKind is a kind of Pebble check, with how it reads into a
// kinds.Peer.
type pebbleKind struct {
	name string
	read func(im *importer, v node, subject string, services []*pebbleService) (kinds.Peer, error)
}

// pebbleKinds are the kinds of a Pebble check. The kind of vitals one is
// imported as is the table's (kinds.Table.Pebble).
var pebbleKinds = []pebbleKind{
	{"http", (*importer).pebbleHTTP},
	{"tcp", (*importer).pebbleTCP},
	{"exec", (*importer).pebbleExec},
}

// pebbleCheck reads one check of the layer. It reports false, with a
// warning, for a check it cannot write: one with no kind, which only merges
// into a check of another layer, or one of a kind that no kind of the table
// takes.
func (im *importer) pebbleCheck(raw string, v node, services []*pebbleService) (check, bool, error) {
	subject := fmt.Sprintf("check %q", raw)
	keys := []string{"override", "level", "startup", "period", "timeout", "threshold"}
	for _, k := range pebbleKinds {
		keys = append(keys, k.name)
	}
	f, unknown, err := v.fields(keys...)
	if err != nil {
		return check{}, false, err
	}
	for _, k := range unknown {
		im.warnf("%s: %q is not a field vitals import knows: left out", subject, k)
	}
	var given []pebbleKind
	var names []string
	for _, k := range pebbleKinds {
		if !f[k.name].absent() {
			given, names = append(given, k), append(names, k.name)
		}
	}
	switch len(given) {
	case 0:
		im.warnf("%s has no http, tcp or exec (a check that merges into another layer's?): left out", subject)
		return check{}, false, nil
	case 1:
	default:
		return check{}, false, v.errorf("a check has one of http, tcp and exec, not %s", strings.Join(names, " and "))
	}
	pk := given[0]
	k := im.kinds.Pebble(pk.name)
	if k == nil {
		im.warnf("%s: left out: vitals has no kind for a Pebble %s check", subject, pk.name)
		return check{}, false, nil
	}
	c := check{name: im.checkName(raw, subject), kind: k.Name}
	if err := im.pebbleLevel(&c, f, subject); err != nil {
		return check{}, false, err
	}
	peer, err := pk.read(im, f[pk.name], subject, services)
	if err != nil {
		return check{}, false, err
	}
	if c.spec, err = im.block(k, peer, f[pk.name]); err != nil {
		return check{}, false, err
	}
	if c.timing, err = im.pebbleTiming(f, subject); err != nil {
		return check{}, false, err
	}
	return c, true, nil
}

// pebbleLevel reads a check's level and startup into c, with notes where
// vitals does otherwise.
func (im *importer) pebbleLevel(c *check, f map[string]node, subject string) error {
	level, err := f["level"].str()
	if err != nil {
		return err
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
		return f["level"].errorf("%q: want alive or ready", level)
	}

	startup, err := f["startup"].str()
	if err != nil {
		return err
	}
	switch startup {
	case "", "enabled":
	case "disabled":
		// As Pebble's: it neither runs nor counts until vitals start NAME,
		// Pebble's start-checks.
		c.disabled = true
	default:
		return f["startup"].errorf("%q: want enabled or disabled", startup)
	}
	return nil
}

// pebbleTiming is a check's timing, with Pebble's defaults for what it
// leaves out, as Pebble applies it.
func (im *importer) pebbleTiming(f map[string]node, subject string) ([]field, error) {
	period, err := pebbleDuration(f["period"], pebblePeriod, false)
	if err != nil {
		return nil, err
	}
	timeout, err := pebbleDuration(f["timeout"], pebbleTimeout, false)
	if err != nil {
		return nil, err
	}
	if timeout > period {
		im.warnf("%s: timeout %s is longer than period %s, which Pebble cuts to the period without a word and vitals refuses: written as timeout: %s",
			subject, durationText(timeout), durationText(period), durationText(period))
		timeout = period
	}
	threshold := int64(pebbleThreshold)
	if t := f["threshold"]; !t.absent() {
		if threshold, err = t.integer(); err != nil {
			return nil, err
		}
		switch {
		case threshold == 0:
			threshold = pebbleThreshold
		case threshold < 0:
			im.warnf("%s: threshold %d is below 1, so Pebble acts on the first failure: written as failure-threshold: 1", subject, threshold)
			threshold = 1
		}
	}
	return []field{
		{key: "period", value: durationText(period), raw: true},
		{key: "timeout", value: durationText(timeout), raw: true},
		{key: "failure-threshold", value: strconv.FormatInt(threshold, 10), raw: true},
	}, nil
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

// pebbleHTTP reads an http check: its URL, the statuses Pebble passes, and
// its headers.
func (im *importer) pebbleHTTP(v node, subject string, _ []*pebbleService) (kinds.Peer, error) {
	f, unknown, err := v.fields("url", "headers")
	if err != nil {
		return kinds.Peer{}, err
	}
	for _, k := range unknown {
		im.warnf("%s: http: %q is not a field vitals import knows: left out", subject, k)
	}
	url, err := f["url"].str()
	if err != nil {
		return kinds.Peer{}, err
	}
	if url == "" {
		return kinds.Peer{}, f["url"].errorf("required")
	}
	headers, err := stringPairs(f["headers"])
	if err != nil {
		return kinds.Peer{}, err
	}
	for _, h := range headers {
		if http.CanonicalHeaderKey(h.Name) == "Host" {
			// Go's client takes the host from the URL and skips a Host
			// header; vitals, as the kubelet, makes it the virtual host.
			im.warnf("%s: Pebble did not send its Host header (Go's client takes the host from the URL); vitals sends it, as the virtual host", subject)
		}
	}
	return kinds.Peer{URL: url, Status: pebbleStatus, StatusNote: "Pebble passes 2xx only", Headers: headers}, nil
}

// pebbleTCP reads a tcp check: the address it connects to.
func (im *importer) pebbleTCP(v node, subject string, _ []*pebbleService) (kinds.Peer, error) {
	f, unknown, err := v.fields("port", "host")
	if err != nil {
		return kinds.Peer{}, err
	}
	for _, k := range unknown {
		im.warnf("%s: tcp: %q is not a field vitals import knows: left out", subject, k)
	}
	p := f["port"]
	if p.absent() {
		return kinds.Peer{}, p.errorf("required")
	}
	port, err := p.integer()
	if err != nil {
		return kinds.Peer{}, err
	}
	if port < 1 || port > 65535 {
		return kinds.Peer{}, p.errorf("%d is not a port (1 to 65535)", port)
	}
	host, err := f["host"].str()
	if err != nil {
		return kinds.Peer{}, err
	}
	if host == "" {
		host = "localhost" // Pebble's default
	}
	return kinds.Peer{Address: net.JoinHostPort(host, strconv.FormatInt(port, 10))}, nil
}

// pebbleExec reads an exec check: its command, split as Pebble splits it,
// and the environment and working directory it runs with, its service
// context's under its own.
func (im *importer) pebbleExec(v node, subject string, services []*pebbleService) (kinds.Peer, error) {
	f, unknown, err := v.fields("command", "service-context", "environment", "working-dir", "user", "user-id", "group", "group-id")
	if err != nil {
		return kinds.Peer{}, err
	}
	for _, k := range unknown {
		im.warnf("%s: exec: %q is not a field vitals import knows: left out", subject, k)
	}
	line, err := f["command"].str()
	if err != nil {
		return kinds.Peer{}, err
	}
	words, err := splitWords(line)
	switch {
	case err != nil:
		return kinds.Peer{}, f["command"].errorf("%q: %v", line, err)
	case len(words) == 0:
		return kinds.Peer{}, f["command"].errorf("required")
	}

	// A service context lends its environment, working directory and user;
	// the check's own settings win.
	var env []kinds.Named
	var dir, user, group string
	if name, err := f["service-context"].str(); err != nil {
		return kinds.Peer{}, err
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
		return kinds.Peer{}, err
	}
	for _, p := range own {
		i := indexNamed(env, p.Name)
		if i < 0 {
			env = append(env, p)
		} else {
			env[i] = p
		}
	}
	if d, err := f["working-dir"].str(); err != nil {
		return kinds.Peer{}, err
	} else if d != "" {
		dir = d
	}
	u, g, err := pebbleUser(f)
	if err != nil {
		return kinds.Peer{}, err
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

	return kinds.Peer{Command: words, Env: env, Dir: dir}, nil
}

// indexNamed is the index of the entry named name in ns, -1 if none.
func indexNamed(ns []kinds.Named, name string) int {
	for i, p := range ns {
		if p.Name == name {
			return i
		}
	}
	return -1
}

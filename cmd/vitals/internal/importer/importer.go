// Package importer writes a vitals.yaml from the health checks another tool
// already has: a Pebble layer's checks, with what its services do when they
// fail and the services themselves, and the Pebble layer that runs that
// vitals under Pebble (vitals import pebble); or a Kubernetes workload's
// probes, with its container's restart rules (vitals import k8s). The
// timing is the same.
//
// It writes the file as text, in the source's order, with comments where
// vitals does a thing differently or not at all, and says on the side
// everything it could not carry over as it was: nothing is dropped silently.
//
// What is the other tool's is read here: manifests and layers, named ports,
// $(VAR), default hosts, services. Each check is read into a kinds.Peer, and
// the table of kinds says which kind takes it (kinds.Table.Kubelet,
// kinds.Table.Pebble) and writes the kind's block from it; a check that no
// kind takes is left out, and said. It sits below the CLI, beside config,
// which it uses to check that the file it wrote loads.
package importer

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

// Result is a vitals.yaml made from another tool's checks.
type Result struct {
	// YAML is the file; nil when the import failed.
	YAML []byte
	// Layer is the Pebble layer that runs this vitals under Pebble, from
	// vitals import pebble; nil otherwise.
	Layer []byte
	// Warnings say, one line each, what was not carried over as the source
	// has it. They are set when the import failed too: they may say why.
	Warnings []string
}

// check is one check of the file to write.
type check struct {
	name     string
	level    string   // startup, live or ready
	notes    []string // comment lines above the fields
	kind     string   // a kind of the table; "" for a probe left out, which is its notes only
	spec     []field  // the kind's block
	timing   []field
	disabled bool // startup: disabled, Pebble's: it runs once vitals start starts it
	// service is the service the check belongs to, whose name is written
	// as service:; "" for none.
	service string
	// onFailure is what vitals does when the check fails, with a comment on
	// its line; key "" for the default, ignore, which is not written.
	onFailure field
	// stopTimeout is the service's stop-timeout when this check's
	// on-failure stops it; key "" for none.
	stopTimeout field
	after       []string // comment lines after the fields
	container   string   // the Kubernetes container whose probe it is; "" for Pebble's
}

// importer holds what one import has found so far.
type importer struct {
	kinds    kinds.Table // the kinds a check may be imported as: kinds.All
	warnings []string
	names    map[string]bool // the check names taken
	services map[string]bool // the service names taken
}

func newImporter(t kinds.Table) *importer {
	return &importer{kinds: t, names: map[string]bool{}, services: map[string]bool{}}
}

func (im *importer) warnf(format string, args ...any) {
	im.warnings = append(im.warnings, fmt.Sprintf(format, args...))
}

// reserved are the check names the probe endpoints use for lines of their
// own (health's shutdown and monitor lines).
var reserved = map[string]bool{"shutdown": true, "monitor": true}

// checkName makes name a valid vitals check name, not yet taken in the file,
// and says why when it had to change it: lower case, with what a name may
// not hold as -, trimmed to 63 characters, a reserved name or one taken
// given a suffix.
func (im *importer) checkName(name, source string) string {
	return im.validName("check", name, source, im.names, reserved)
}

// serviceName makes name a valid vitals service name, spelled as a check's,
// not yet taken among the services, and says why when it had to change it.
func (im *importer) serviceName(name, source string) string {
	return im.validName("service", name, source, im.services, nil)
}

// validName is checkName and serviceName: a name of what, among taken, none
// of reserved.
func (im *importer) validName(what, name, source string, taken, reserved map[string]bool) string {
	valid := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, name)
	valid = trimName(valid)
	if valid == "" {
		valid = what
	}
	why := "a vitals " + what + " name is lower case letters, digits and - _ . inside, at most 63 characters"
	if valid == name {
		why = ""
	}
	if reserved[valid] {
		why = fmt.Sprintf("%q names a line of the probe endpoints", valid)
		valid = trimName(valid + "-" + what)
	}
	if taken[valid] {
		base := valid
		for i := 2; taken[valid]; i++ {
			suffix := fmt.Sprintf("-%d", i)
			valid = trimName(base[:min(len(base), 63-len(suffix))]) + suffix
		}
		why = fmt.Sprintf("%q is taken", base)
	}
	taken[valid] = true
	if valid != name {
		im.warnf("%s is written as %q: %s", source, valid, why)
	}
	return valid
}

// trimName cuts a name to 63 characters and trims what may not end or
// start it.
func trimName(s string) string {
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-_.")
}

// durationText writes a duration as a person would: 10s, 1m, 1m30s, 500ms.
func durationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// block is the block of kind k for a peer's check read from node v, whose
// error it places at v.
func (im *importer) block(k *kinds.Kind, p kinds.Peer, v node) ([]field, error) {
	pairs, err := k.FromPeer(p)
	if err != nil {
		return nil, v.errorf("%v", err)
	}
	spec := make([]field, len(pairs))
	for i, p := range pairs {
		f := field{key: p.Key, note: p.Note}
		switch v := p.Value.(type) {
		case string:
			f.value = v
		case bool:
			f.value, f.raw = strconv.FormatBool(v), true
		case []string:
			f.list = v
		case []kinds.Named:
			f.pairs = v
		default:
			panic(fmt.Sprintf("kind %s writes %s as a %T, which is none of a Pair's values", k.Name, p.Key, p.Value))
		}
		spec[i] = f
	}
	return spec, nil
}

// vitalsFile is what a vitals.yaml is made of, in its order.
type vitalsFile struct {
	header   []string // comment lines at the top
	preamble []string // comment lines before the services
	services []string // the service: or services: block's lines, as they are
	checks   []check
	trailer  []string // comment lines at the end
}

// render writes the file: the line that names its schema for editors,
// header and preamble as comments, the services' lines as they are, the
// checks, then the trailer as comments.
func render(doc vitalsFile) []byte {
	var w writer
	w.line(0, config.SchemaComment)
	for _, h := range doc.header {
		w.comment(0, h)
	}
	if len(doc.preamble) > 0 {
		w.line(0, "")
		for _, p := range doc.preamble {
			w.comment(0, p)
		}
		w.line(0, "")
	}
	if len(doc.services) > 0 {
		if len(doc.preamble) == 0 {
			w.line(0, "")
		}
		for _, l := range doc.services {
			w.line(0, l)
		}
		w.line(0, "")
	}
	w.line(0, "checks:")
	for _, c := range doc.checks {
		if c.kind == "" {
			for _, n := range c.notes {
				w.comment(1, n)
			}
			continue
		}
		w.line(1, scalar(c.name)+":")
		for _, n := range c.notes {
			w.comment(2, n)
		}
		w.field(2, field{key: "level", value: c.level})
		if c.disabled {
			w.field(2, field{key: "startup", value: "disabled", raw: true})
		}
		w.line(2, c.kind+":")
		for _, f := range c.spec {
			w.field(3, f)
		}
		for _, f := range c.timing {
			w.field(2, f)
		}
		if c.service != "" {
			w.field(2, field{key: "service", value: c.service})
		}
		for _, f := range []field{c.onFailure, c.stopTimeout} {
			if f.key != "" {
				w.field(2, f)
			}
		}
		for _, a := range c.after {
			w.comment(2, a)
		}
	}
	if len(doc.trailer) > 0 {
		w.line(0, "")
		for _, t := range doc.trailer {
			w.comment(0, t)
		}
	}
	return []byte(w.b.String())
}

// finish renders the file and loads it as vitals validate would, on this
// machine. The importer has checked what does not depend on the machine
// (names, timing, URLs, addresses), so what fails here is what does: an exec
// check's command looked up in $PATH, its working directory. That is a
// warning, not an error: the file is for the machine vitals will run on.
func (im *importer) finish(doc vitalsFile) Result {
	data := render(doc)
	_, err := config.Parse("vitals.yaml", data, func(string) (string, bool) { return "", false }, im.kinds)
	var errs config.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			im.warnf("the file does not load on this machine: %v", e)
		}
	} else if err != nil {
		im.warnf("the file does not load on this machine: %v", err)
	}
	return Result{YAML: data, Warnings: im.warnings}
}

// exitRule is a service's restart rule: what vitals does when the service
// exits with a code in (or not in) codes, before its restart: policy.
type exitRule struct {
	action   string // restart, exit or ignore
	operator string // in or not-in
	codes    []int64
	note     string
}

// rulesField is the restart-rules: of a service, one flow mapping a rule.
func rulesField(rules []exitRule) field {
	f := field{key: "restart-rules"}
	for _, r := range rules {
		codes := make([]string, len(r.codes))
		for i, c := range r.codes {
			codes[i] = strconv.FormatInt(c, 10)
		}
		f.items = append(f.items, field{note: r.note,
			value: fmt.Sprintf("{action: %s, exit-codes: {operator: %s, values: [%s]}}", r.action, r.operator, strings.Join(codes, ", "))})
	}
	return f
}

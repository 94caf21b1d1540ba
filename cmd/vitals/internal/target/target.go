// Package target turns what a user types — a URL whose scheme names the kind,
// or a command line, and the flags that go with the kind — into a probe. The
// one-shot commands (vitals probe, vitals wait) share it. It knows no kind of
// its own but k8s:// (a Kubernetes object, which is no kind of vitals.yaml):
// the schemes, flags and builders are the kinds table's (kinds.All, each
// kind's CLI), and so are the lists and help lines it writes of them.
package target

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// Options are the kind flags of one command line: DefineFlags defines them on
// the command's flag set, and Build reads from it the values the user gave.
// The zero Options are a command line that gave none.
type Options struct{ f *pflag.FlagSet }

// flag is one kind flag of the command line: each is defined once, however
// many kinds take it.
type flag struct {
	kinds.Flag
	kinds  []string                             // the kinds that take it, in the table's order
	define func(f *pflag.FlagSet, usage string) // defines it with usage
}

// flags are every kind's flags, in the table's order, then k8s's.
var flags = func() []flag {
	var out []flag
	for _, k := range kinds.All {
		for _, fl := range k.CLI.Flags() {
			i := slices.IndexFunc(out, func(o flag) bool { return o.Name == fl.Name })
			if i < 0 {
				out = append(out, flag{Flag: fl, define: func(f *pflag.FlagSet, usage string) { fl.Value.Define(f, fl.Name, usage) }})
				i = len(out) - 1
			}
			out[i].kinds = append(out[i].kinds, k.Name)
		}
	}
	return append(out, kubeFlags...)
}()

// kubeFlags are the flags of k8s:// targets. The probe build hides them, as
// it has no k8s:// target: given, they are still read, so that the target is
// what says where k8s:// is.
var kubeFlags = []flag{
	kubeFlag("namespace", "n", "the namespace (default: the kubeconfig context's, or the pod's own)", false),
	kubeFlag("kubeconfig", "", "the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in a pod its service account)", true),
	kubeFlag("context", "", "the kubeconfig context to use (default: its current context)", false),
}

func kubeFlag(name, shorthand, usage string, file bool) flag {
	return flag{Flag: kinds.Flag{Name: name, Usage: usage, File: file}, kinds: []string{kubeKind},
		define: func(f *pflag.FlagSet, usage string) { f.StringP(name, shorthand, "", usage) }}
}

// kubeKind is the kind of k8s:// targets.
const kubeKind = "k8s"

// DefineFlags defines every kind flag on f, once each, its usage after the
// kinds that take it, and returns them as Options to build targets with.
func DefineFlags(f *pflag.FlagSet) Options {
	for _, fl := range flags {
		fl.define(f, strings.Join(fl.kinds, ", ")+": "+fl.Usage)
		if fl.File {
			f.SetAnnotation(fl.Name, cobraFilename, []string{})
		}
		if !KubeBuilt && slices.Equal(fl.kinds, []string{kubeKind}) {
			f.MarkHidden(fl.Name)
		}
	}
	return Options{f}
}

// cobraFilename is cobra's annotation for a flag that takes a file name.
const cobraFilename = "cobra_annotation_bash_completion_filename"

// Choices are the kind flags that take one of a fixed set of values, and
// those values, for shell completion.
func Choices() map[string][]string {
	out := map[string][]string{}
	for _, fl := range flags {
		if fl.Choices != nil {
			out[fl.Name] = fl.Choices
		}
	}
	return out
}

// KindsOf returns the kinds that take the named flag, nil for a flag that is
// not a kind flag.
func KindsOf(name string) []string {
	for _, fl := range flags {
		if fl.Name == name {
			return fl.kinds
		}
	}
	return nil
}

// Given returns the kind flags the user gave, in the table's order.
func (o Options) Given() []string {
	var out []string
	for _, fl := range flags {
		if o.f != nil && o.f.Changed(fl.Name) {
			out = append(out, fl.Name)
		}
	}
	return out
}

// Unfit returns the flags the user gave that do not apply to kind.
func (o Options) Unfit(kind string) []string {
	var out []string
	for _, name := range o.Given() {
		if !slices.Contains(KindsOf(name), kind) {
			out = append(out, "--"+name)
		}
	}
	return out
}

// Secrets returns what the values of the kind flags the user gave carry
// that no output may show, as each flag's kind says (kinds.Flag.Secrets).
func (o Options) Secrets() []string {
	var out []string
	for _, fl := range flags {
		if fl.Secrets == nil || o.f == nil || !o.f.Changed(fl.Name) {
			continue
		}
		v := o.f.Lookup(fl.Name).Value
		values := []string{v.String()}
		if s, ok := v.(pflag.SliceValue); ok {
			values = s.GetSlice()
		}
		for _, value := range values {
			out = append(out, fl.Secrets(value)...)
		}
	}
	return out
}

// flagSet is the flag set the kinds read their flags from: none given for
// the zero Options.
func (o Options) flagSet() *pflag.FlagSet {
	if o.f == nil {
		return pflag.NewFlagSet("none", pflag.ContinueOnError)
	}
	return o.f
}

// schemes are the target schemes of every kind in the table that has any,
// and the kinds they name; k8s too.
var schemes = func() map[string]*kinds.Kind {
	out := map[string]*kinds.Kind{}
	for _, k := range kinds.All {
		for _, s := range k.CLI.Schemes {
			out[s] = k
		}
	}
	return out
}()

// schemeNames are the schemes of this build's targets, in the order that
// messages list them: the table's, then k8s.
var schemeNames = func() []string {
	var names []string
	for _, k := range kinds.All {
		if k.CLI.Builds() {
			names = append(names, k.CLI.Schemes...)
		}
	}
	if KubeBuilt {
		names = append(names, kubeKind)
	}
	return names
}()

// KindOf says which kind a target is, or why it is none.
func KindOf(target string) (string, error) {
	scheme, rest, ok := strings.Cut(target, ":")
	lower := strings.ToLower(scheme) // what is looked up; messages say the scheme as typed
	if k := kinds.All.Lookup(lower); k != nil && k.CLI.Why != "" {
		return "", fmt.Errorf("target %q: %s", target, k.CLI.Why)
	}
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/.") {
		return "", fmt.Errorf("target %q has no scheme: use %s://, or -- COMMAND for exec", target, strings.Join(schemeNames, "://, "))
	}
	k, known := schemes[lower]
	switch {
	case !known && lower != kubeKind:
		last := len(schemeNames) - 1
		return "", fmt.Errorf("target %q: unknown scheme %q: use %s or %s (or -- COMMAND for exec)", target, scheme, strings.Join(schemeNames[:last], ", "), schemeNames[last])
	case !strings.HasPrefix(rest, "//"):
		return "", fmt.Errorf("target %q: write %s://…", target, scheme)
	case !known:
		return kubeKind, nil
	}
	return k.Name, nil
}

// Target is what a target builds: the *probe.Prober of its kind (the one
// shape of every check, the agent's too), which Measure and Check run once,
// and for a target that is followed as it changes rather than tried again
// (k8s://, through the API server's watch) its Watch, so that a wait knows
// how to follow a target from the Target itself, not by asking its type.
// Close releases what the probe keeps between runs (a dependency's
// connection); whoever built it calls Close when done with it. The zero
// Target is none: what Build returns with an error.
type Target struct {
	*probe.Prober
	// Watch reports the target's result at every change until it passes (it
	// returns nil), can never pass (it returns why), or ctx ends (it returns
	// ctx's error); with each result, what the target found, as a document
	// for -o json and -o yaml (a k8s:// target's kubewait.Result). Nil for a
	// target that is tried again: every kind's.
	Watch func(ctx context.Context, report func(r health.Result, found any)) error
}

// Build makes the probe for a URL target, with the flags the user gave.
func Build(target string, o Options) (Target, error) {
	kind, err := KindOf(target)
	if err != nil {
		return Target{}, err
	}
	if kind == kubeKind {
		return buildKube(target, o)
	}
	k := kinds.All.Lookup(kind)
	if !k.CLI.Builds() {
		scheme, _, _ := strings.Cut(target, ":")
		return Target{}, inFullBuild(target, strings.ToLower(scheme))
	}
	return polled(k.CLI.Build(target, o.flagSet()))
}

// Window is how long target, with the kind flags the user gave, needs to
// decide over its runs: the shortest window of a metric condition's
// increase and rate, which needs two scrapes within it; 0 when one run
// decides, or when target names no kind (Build says so).
func Window(target string, o Options) time.Duration {
	kind, err := KindOf(target)
	if err != nil || kind == kubeKind {
		return 0
	}
	w, err := kinds.All.Lookup(kind).CLI.Window(o.flagSet())
	if err != nil {
		return 0 // a flag Build refuses, saying so
	}
	return w
}

// inFullBuild is the error of a target of this build's tables that only the
// full build makes a probe of: the probe build's dependency kinds and k8s.
func inFullBuild(target, scheme string) error {
	return fmt.Errorf("target %q: %s:// targets are in the full build of vitals (built without -tags vitals_probe); this is the probe build", target, scheme)
}

// BuildExec makes the probe for a command line, with the flags the user gave.
func BuildExec(argv []string, o Options) (Target, error) {
	return polled(kinds.Exec.CLI.BuildCommand(argv, o.flagSet()))
}

// polled is a kind's constructor's answer as a Target that is tried again
// (no Watch): none with an error.
func polled(p *probe.Prober, err error) (Target, error) {
	if err != nil {
		return Target{}, err
	}
	return Target{Prober: p}, nil
}

// Builds says whether this build makes probes of the named kind's targets:
// the probe build makes none of the dependency kinds'.
func Builds(kind string) bool {
	k := kinds.All.Lookup(kind)
	return k != nil && k.CLI.Builds()
}

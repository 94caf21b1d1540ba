package kinds_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/target"
)

// probeBuild says whether this is the probe build (-tags vitals_probe),
// which has no k8s:// targets and makes no dependency kind's probe.
var probeBuild = !target.KubeBuilt

// fullBuildOnly are the kinds whose probes only the full build makes: they
// link a client of their own (deps_probe.go).
var fullBuildOnly = []string{"postgres", "redis", "amqp", "nats"}

// flagsInHelp are the flags a kind's help line names.
var flagsInHelp = regexp.MustCompile(`--[a-z-]+`)

// Every kind of the table is a target of vitals probe and vitals wait whose
// example builds its probe, or says why it is none: log, heartbeat and notify, and
// in the probe build the kinds whose clients it leaves out.
func TestEveryKindIsATargetWhoseExampleBuildsOrSaysWhyNot(t *testing.T) {
	schemes := map[string]string{}
	for _, k := range kinds.All {
		t.Run(k.Name, func(t *testing.T) {
			c := k.CLI
			if c == nil {
				t.Fatal("no CLI: a target, or why there is none, please")
			}
			for _, s := range c.Schemes {
				if other, ok := schemes[s]; ok {
					t.Errorf("scheme %s is %s's too", s, other)
				}
				if other := kinds.All.Lookup(s); other != nil && other != k {
					t.Errorf("scheme %s is the name of kind %s", s, other.Name)
				}
				schemes[s] = k.Name
			}
			switch {
			case c.Why != "":
				if c.Builds() || c.Schemes != nil || c.Target != "" || c.Flags() != nil {
					t.Errorf("a kind that says why it is no target has a target")
				}
				if _, err := target.KindOf(k.Name + "://x"); err == nil || !strings.HasSuffix(err.Error(), c.Why) {
					t.Errorf("a target %s://x: %v, want %q", k.Name, err, c.Why)
				}
				return
			case !c.Builds():
				if !probeBuild || !slices.Contains(fullBuildOnly, k.Name) {
					t.Fatalf("builds no probe, and says not why")
				}
				for _, s := range c.Schemes {
					if _, err := target.Build(s+"://x", target.Options{}); err == nil || !strings.Contains(err.Error(), s+":// targets are in the full build of vitals") {
						t.Errorf("%s://x: %v", s, err)
					}
				}
				return
			}
			if c.Target == "" || c.Help == "" || c.Example == "" {
				t.Errorf("a target %q, help %q and an example %q, please", c.Target, c.Help, c.Example)
			}
			var p target.Target
			var err error
			if argv, ok := strings.CutPrefix(c.Example, "-- "); ok {
				if c.Schemes != nil {
					t.Errorf("a command line is the example of a kind with schemes")
				}
				p, err = target.BuildExec(strings.Fields(argv), target.Options{})
			} else {
				// A target, and the flags it needs (a metric target's --expr).
				f := pflag.NewFlagSet("example", pflag.ContinueOnError)
				o := target.DefineFlags(f)
				if err := f.Parse(c.ExampleFlags); err != nil {
					t.Fatalf("%s %q: %v", c.Example, c.ExampleFlags, err)
				}
				var kind string
				if kind, err = target.KindOf(c.Example); err != nil || kind != k.Name {
					t.Fatalf("KindOf(%q) = %q, %v", c.Example, kind, err)
				}
				p, err = target.Build(c.Example, o)
			}
			if err != nil || p.Kind() != k.Name {
				t.Fatalf("%s: %v", c.Example, err)
			}
			p.Close()
			for _, s := range c.Schemes {
				if kind, err := target.KindOf(strings.ToUpper(s) + "://x"); err != nil || kind != k.Name {
					t.Errorf("%s://: vitals probe says kind %q, %v; the table says %s", s, kind, err, k.Name)
				}
			}
			var names []string
			for _, fl := range c.Flags() {
				names = append(names, "--"+fl.Name)
				if fl.Name == "" || fl.Usage == "" {
					t.Errorf("flag %+v: a name and a usage, please", fl)
				}
			}
			for _, named := range flagsInHelp.FindAllString(c.Help, -1) {
				if !slices.Contains(names, named) {
					t.Errorf("its help %q names %s, which is none of its flags %v", c.Help, named, names)
				}
			}
		})
	}
}

// A flag that several kinds take is one flag of the command: each kind
// declares it alike.
func TestAFlagOfSeveralKindsIsDeclaredAlike(t *testing.T) {
	type seen struct {
		kind, usage   string
		file, secrets bool
		choices       []string
	}
	first := map[string]seen{}
	for _, k := range kinds.All {
		for _, fl := range k.CLI.Flags() {
			s := seen{k.Name, fl.Usage, fl.File, fl.Secrets != nil, fl.Choices}
			f, ok := first[fl.Name]
			if !ok {
				first[fl.Name] = s
				continue
			}
			if f.usage != s.usage || f.file != s.file || !slices.Equal(f.choices, s.choices) || f.secrets != s.secrets {
				t.Errorf("--%s of %s is not --%s of %s", fl.Name, k.Name, fl.Name, f.kind)
			}
		}
	}
}

package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/target"
)

// probeBuildLeavesOut are the kinds whose probes the probe build does not
// make: they link the clients that TestTheProbeBuildLinksNoneOfTheAgentsModules
// keeps out of it.
var probeBuildLeavesOut = []string{"postgres", "redis", "amqp", "nats"}

// Every kind of the table is a target of vitals probe, in both builds: its
// example runs (passing or failing, its output names the target), or the
// command says why it runs none: log, heartbeat and notify in both builds, the
// dependency kinds in the probe build, at each of their schemes. None is a
// usage error otherwise.
func TestEveryKindOfTheTableIsAProbeTargetOrSaysWhyNot(t *testing.T) {
	for _, k := range kinds.All {
		t.Run(k.Name, func(t *testing.T) {
			t.Parallel()
			c := k.CLI
			if c.Why != "" {
				for _, binary := range []string{vitals, vitalsProbe} {
					binaryRun(t, binary, "probe", k.Name+"://x").expect(t, 2, "", `vitals: target "`+k.Name+`://x": `+c.Why+"\n")
				}
				return
			}
			args := append(append([]string{"probe", "-v", "--timeout", "5s"}, c.ExampleFlags...), strings.Fields(c.Example)...)
			f := pflag.NewFlagSet("example", pflag.ContinueOnError)
			o := target.DefineFlags(f)
			if err := f.Parse(c.ExampleFlags); err != nil {
				t.Fatalf("%s %q: %v", c.Example, c.ExampleFlags, err)
			}
			var p target.Target
			var err error
			if argv, ok := strings.CutPrefix(c.Example, "-- "); ok {
				p, err = target.BuildExec(strings.Fields(argv), o)
			} else {
				p, err = target.Build(c.Example, o)
			}
			if err != nil {
				t.Fatalf("%s: %v", c.Example, err)
			}
			p.Close()
			for _, binary := range []string{vitals, vitalsProbe} {
				if binary == vitalsProbe && slices.Contains(probeBuildLeavesOut, k.Name) {
					for _, scheme := range c.Schemes {
						tgt := scheme + strings.TrimPrefix(c.Example, c.Schemes[0])
						binaryRun(t, binary, "probe", tgt).expect(t, 2, "",
							`vitals: target "`+tgt+`": `+scheme+":// targets are in the full build of vitals (built without -tags vitals_probe); this is the probe build\n")
					}
					continue
				}
				r := binaryRun(t, binary, args...)
				if (r.code != 0 && r.code != 1) || !strings.Contains(r.stdout+r.stderr, p.String()) {
					t.Errorf("%s %v: exit %d, stdout %q, stderr %q; want 0 or 1, naming %q", binary, args, r.code, r.stdout, r.stderr, p.String())
				}
			}
		})
	}
}

//go:build !vitals_probe

package kinds_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/logwatch"
	"github.com/vitals-dev/vitals/health"
)

func noEnv(string) (string, bool) { return "", false }

// Every kind of the table says what it is, decodes its example from a file,
// appears in the reference with every field, and builds (a heartbeat
// excepted: the workload beats it).
func TestEveryKindDecodesAppearsInTheReferenceAndBuilds(t *testing.T) {
	ref := reference()
	seen := map[string]bool{}
	for _, k := range kinds.All {
		t.Run(k.Name, func(t *testing.T) {
			if k.Name == "" || seen[k.Name] || k.Summary == "" || k.Example == "" {
				t.Fatalf("kind %q: a name of its own, a summary and an example, please", k.Name)
			}
			seen[k.Name] = true
			for _, f := range k.Fields() {
				if f.Key == "" || f.Type == "" || f.Doc == "" || f.Read == nil {
					t.Errorf("field %+v: a key, a type, a doc and a reader, please", f)
				}
				if !strings.Contains(ref, "| `"+f.Key+"` |") {
					t.Errorf("field %s is not in the reference", f.Key)
				}
			}
			if !strings.Contains(ref, "\n### "+k.Name+"\n") || !strings.Contains(ref, "[`"+k.Name+"`](#"+k.Name+")") {
				t.Errorf("kind %s is not in the reference", k.Name)
			}
			c, err := config.Parse("vitals.yaml", []byte("checks:\n  a:\n    "+k.Name+": "+k.Example+"\n"), noEnv, kinds.All)
			if err != nil {
				t.Fatalf("its example does not load: %v", err)
			}
			ch := c.Checks[0]
			if ch.Kind != k.Name || ch.Spec == nil || ch.Source != k.Example {
				t.Errorf("loaded as kind %q, spec %v, source %q", ch.Kind, ch.Spec, ch.Source)
			}
			switch k.ComponentType {
			case health.ComponentTypeComponent, health.ComponentTypeDatastore, health.ComponentTypeSystem:
			default:
				t.Errorf("component type %q: component, datastore or system, please", k.ComponentType)
			}
			if ch.ComponentType != k.ComponentType {
				t.Errorf("loaded with component type %q, want the kind's, %q", ch.ComponentType, k.ComponentType)
			}
			var registered []*logwatch.Check
			var looksAtWorkload, heard []string
			checker, err := kinds.All.Build(ch, kinds.Env{Output: func(lc *logwatch.Check) { registered = append(registered, lc) },
				Workload: func(check string) func() int {
					looksAtWorkload = append(looksAtWorkload, check)
					return func() int { return 0 }
				},
				Notify: func(name string, _ time.Duration) health.Checker {
					heard = append(heard, name)
					return health.CheckerFunc(func(context.Context) error { return nil })
				}})
			if k.Fed(ch.Spec).Feed != 0 {
				if ch.Fed != k.Fed(ch.Spec) || ch.Fed.Deadline <= 0 || err == nil ||
					!strings.HasSuffix(err.Error(), "runs nothing: the workload feeds it through the management API") {
					t.Errorf("a fed kind: %+v, Build %v, %v", ch.Fed, checker, err)
				}
				return
			}
			if err != nil || checker == nil {
				t.Fatalf("Build: %v, %v", checker, err)
			}
			if c, ok := checker.(io.Closer); ok {
				c.Close()
			}
			if (k.Name == kinds.Log.Name) != (len(registered) == 1) {
				t.Errorf("%d checks registered with the output", len(registered))
			}
			if lookAt := k.Name == kinds.Connection.Name || k.Name == kinds.Listening.Name; lookAt != slices.Equal(looksAtWorkload, []string{"a"}) {
				t.Errorf("checks registered for the workload's pid: %q", looksAtWorkload)
			}
			if (k.Name == kinds.Notify.Name) != slices.Equal(heard, []string{"a"}) {
				t.Errorf("checks %q made to hear the workload", heard)
			}
		})
	}
	if !slices.IsSorted(kinds.All.Names()) || len(kinds.All.Names()) != len(kinds.All) {
		t.Errorf("Names %v", kinds.All.Names())
	}
}

// A check of a kind that is not in the table does not load: the table is
// the only list of kinds.
func TestAKindNotInTheTableIsNone(t *testing.T) {
	_, err := config.Parse("vitals.yaml", []byte("checks:\n  a:\n    http: {url: http://x}\n"), noEnv, kinds.Table{&kinds.TCP})
	want := `vitals.yaml:3:5: checks.a.http: unknown field "http" (want component-type, failure-threshold, initial-delay, level, on-failure, override, period, service, stable-for, startup, stop-timeout, success-threshold, tcp, timeout)` + "\n" +
		`vitals.yaml:3:9: checks.a: no kind: give one of tcp`
	if err == nil || err.Error() != want {
		t.Fatalf("%v, want %s", err, want)
	}
}

// A check that reads the workload (its output, its word) does not build
// without one.
func TestACheckOfTheWorkloadDoesNotBuildWithoutOne(t *testing.T) {
	for kind, want := range map[string]error{"log": kinds.ErrNoWorkload, "notify": kinds.ErrNoWorkloadToHear} {
		k := kinds.All.Lookup(kind)
		c, err := config.Parse("vitals.yaml", []byte("checks:\n  a:\n    "+kind+": "+k.Example+"\n"), noEnv, kinds.All)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kinds.All.Build(c.Checks[0], kinds.Env{}); err == nil || !strings.HasSuffix(err.Error(), want.Error()) {
			t.Errorf("%s: %v, want %v", kind, err, want)
		}
	}
}

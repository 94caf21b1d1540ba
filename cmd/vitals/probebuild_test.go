package main

import (
	"bufio"
	"bytes"
	"debug/buildinfo"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The probe build (-tags vitals_probe) is the one-shot commands and the
// agent's client commands, without the agent: what an exec probe starts on
// every run. TestProbeCoversEveryKind and the gRPC test run it beside the full
// build; these tests pin what it leaves out.

// agentOnly are modules only the agent (and the full build's k8s:// targets)
// need: the probe build must link none.
var agentOnly = []string{
	"github.com/prometheus/client_golang",
	"github.com/jackc/pgx/v5",
	"github.com/redis/go-redis/v9",
	"github.com/rabbitmq/amqp091-go",
	"github.com/nats-io/nats.go",
	"k8s.io/client-go",
}

func linkedModules(t *testing.T, binary string) map[string]bool {
	t.Helper()
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, d := range info.Deps {
		linked[d.Path] = true
	}
	return linked
}

func TestTheProbeBuildLinksNoneOfTheAgentsModules(t *testing.T) {
	full, lean := linkedModules(t, vitals), linkedModules(t, vitalsProbe)
	for _, mod := range agentOnly {
		if !full[mod] {
			t.Errorf("the full build does not link %s: the list of agent-only modules is out of date", mod)
		}
		if lean[mod] {
			t.Errorf("the probe build links %s, which only the full build needs", mod)
		}
	}
	for _, mod := range []string{"google.golang.org/grpc", "github.com/vitals-dev/vitals/grpchealth"} {
		if !lean[mod] {
			t.Errorf("the probe build does not link %s: it probes grpc://", mod)
		}
	}
}

func TestTheProbeBuildLinksNoneOfTheAgentsPackages(t *testing.T) {
	list := func(tags ...string) map[string]bool {
		out, err := exec.Command("go", append(append([]string{"list", "-deps"}, tags...), ".")...).Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", tags, err)
		}
		pkgs := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			pkgs[p] = true
		}
		return pkgs
	}
	full, lean := list(), list("-tags", "vitals_probe")
	const module = "github.com/vitals-dev/vitals/cmd/vitals/"
	// The probe build links kinds, and through it config (the file's plain
	// data, through which the table describes each kind's fields) and
	// logwatch (the log kind's spec): vitals probe and vitals wait read the
	// same table as the agent. It links none of what builds the agent, nor
	// the dependency kinds' clients (deps), nor the k8s:// targets'
	// (kubewait, public for operators).
	for _, p := range []string{"internal/agent", "internal/hooks", "internal/supervise", "internal/metrics", "internal/deps",
		"internal/importer", "internal/kube", "internal/fleet", "kubewait"} {
		if !full[module+p] {
			t.Errorf("the full build does not link %s: the list of agent packages is out of date", p)
		}
		if lean[module+p] {
			t.Errorf("the probe build links %s, which only the full build needs", p)
		}
	}
}

func TestTheProbeBuildSaysWhereTheAgentsCommandsAre(t *testing.T) {
	binaryRun(t, vitalsProbe, "version").expect(t, 0, "vitals dev (probe build, go1.", "")
	for _, args := range [][]string{
		{"run", "--", "true"},
		{"run", "-c", "vitals.yaml"},
		{"validate"},
		{"import", "pebble", "layer.yaml"},
		{"fleet", "-n", "shop", "--once"},
	} {
		r := binaryRun(t, vitalsProbe, args...)
		r.expect(t, 2, "", "vitals "+args[0]+": this is the probe build of vitals")
		if !strings.Contains(r.stderr, args[0]+" is in the full build") {
			t.Errorf("vitals %v: %q does not say where %s is", args, r.stderr, args[0])
		}
	}
	for _, args := range [][]string{{"run", "--help"}, {"help", "validate"}} {
		binaryRun(t, vitalsProbe, args...).expect(t, 0, "this is the probe build of vitals", "")
	}
	help := binaryRun(t, vitalsProbe, "--help")
	help.expect(t, 0, "This is the probe build", "")
	for _, want := range []string{"probe", "wait", "health", "events"} {
		if !strings.Contains(help.stdout, "\n  "+want) {
			t.Errorf("the probe build's help does not list %s:\n%s", want, help.stdout)
		}
	}
}

// The builds keep only the methods they call. Nothing in them may call a
// method by a name it learns as it runs, as text/template does (reflect's
// MethodByName): where one can be reached, the linker keeps every exported
// method of every type in the binary, a third of the full build, and what
// the process maps and starts with grows alike. A template executed
// anywhere brings it back: cobra's SetVersionTemplate, say, or
// golang.org/x/net/trace's pages, which grpc links without -tags grpcnotrace.
// The linker's -dumpdep says which function does it, and what reaches it.
func TestTheBuildsKeepOnlyTheMethodsTheyCall(t *testing.T) {
	for _, tags := range []string{releaseTags, "vitals_probe," + releaseTags} {
		cmd := exec.Command("go", "build", "-tags", tags, "-ldflags=-dumpdep", "-o", os.DevNull, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go build -tags %s -ldflags=-dumpdep: %v\n%.2000s", tags, err, out)
		}
		// Each line is "FROM -> TO" the first time the linker reaches TO, a
		// function that calls methods by name marked <ReflectMethod>.
		reachedFrom := map[string]string{}
		var culprit string
		lines := bufio.NewScanner(bytes.NewReader(out))
		lines.Buffer(nil, 1<<20)
		for lines.Scan() {
			from, to, ok := strings.Cut(lines.Text(), " -> ")
			if !ok {
				continue
			}
			name := strings.TrimSuffix(to, " <ReflectMethod>")
			if _, seen := reachedFrom[name]; !seen {
				reachedFrom[name] = strings.TrimSuffix(from, " <ReflectMethod>")
			}
			if name != to && culprit == "" {
				culprit = name
			}
		}
		if culprit == "" {
			continue
		}
		chain := []string{culprit}
		for f := reachedFrom[culprit]; f != "" && f != "_" && len(chain) < 30; f = reachedFrom[f] {
			chain = append(chain, f)
		}
		t.Errorf("the build with -tags %s keeps every exported method: %s calls methods by name, reached through\n  %s",
			tags, culprit, strings.Join(chain[1:], "\n  "))
	}
}

// vitals's own packages do little before main, where every process pays for
// it, vitals probe and vitals version too: what one command or part needs
// (the status page's files, vitals import's patterns) is made at its first
// use. GODEBUG=inittrace=1 says what each package's init allocated.
func TestVitalsOwnPackagesDoLittleBeforeMain(t *testing.T) {
	const most = 64 << 10 // bytes; the table of kinds and the targets' flags take about 40 KB
	for _, binary := range []string{vitals, vitalsProbe} {
		cmd := exec.Command(binary, "version")
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s version: %v\n%s", binary, err, stderr.Bytes())
		}
		// init github.com/vitals-dev/vitals/cmd/vitals/internal/ui @15 ms, 2.2 ms clock, 711056 bytes, 16249 allocs
		own := 0
		for line := range strings.Lines(stderr.String()) {
			f := strings.Fields(line)
			if len(f) < 11 || f[0] != "init" || f[8] != "bytes," || !strings.HasPrefix(f[1], "github.com/vitals-dev/vitals") {
				continue
			}
			own++
			if n, err := strconv.Atoi(f[7]); err != nil || n > most {
				t.Errorf("%s: the init of %s allocated %s bytes (%s allocations), more than %d: make it at its first use", binary, f[1], f[7], f[9], most)
			}
		}
		if own == 0 {
			t.Errorf("%s: GODEBUG=inittrace=1 said nothing of vitals's packages:\n%s", binary, stderr.Bytes())
		}
	}
}

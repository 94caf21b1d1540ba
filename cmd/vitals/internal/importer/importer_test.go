package importer

import (
	"flag"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/health"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares what an import wrote with the file at path.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("the file written differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}

// loadConfig reads what an import wrote as vitals validate would, with no
// environment: every $ in it must be a literal one.
func loadConfig(t *testing.T, data []byte) *config.Config {
	t.Helper()
	c, err := config.Parse("vitals.yaml", data, func(string) (string, bool) { return "", false }, kinds.All)
	if err != nil {
		t.Fatalf("the file written does not load:\n%v\n%s", err, data)
	}
	return c
}

// load is loadConfig's checks, by name.
func load(t *testing.T, data []byte) map[string]config.Check {
	t.Helper()
	c := loadConfig(t, data)
	out := map[string]config.Check{}
	for _, ch := range c.Checks {
		out[ch.Name] = ch
	}
	return out
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func sameLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
		t.Errorf("%s:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// timing is a check's level and timing as loaded.
type timing struct {
	level                  health.Level
	period, timeout, delay time.Duration
	success, failure       int
}

func timingOf(c config.Check) timing {
	return timing{c.Level, c.Period, c.Timeout, c.InitialDelay, c.SuccessThreshold, c.FailureThreshold}
}

func TestCheckNamesAreMadeValidUniqueAndNotReserved(t *testing.T) {
	im := newImporter(kinds.All)
	long := strings.Repeat("a", 70)
	for _, tt := range []struct{ in, want string }{
		{"web", "web"},
		{"Web_Alive", "web_alive"},
		{"db ready!", "db-ready"},
		{"-edge-", "edge"},
		{"web", "web-2"},
		{"WEB", "web-3"},
		{"shutdown", "shutdown-check"},
		{"monitor", "monitor-check"},
		{"???", "check"},
		{long, strings.Repeat("a", 63)},
		{long, strings.Repeat("a", 61) + "-2"},
	} {
		if got := im.checkName(tt.in, "check "+tt.in); got != tt.want || !health.ValidName(got) {
			t.Errorf("checkName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	sameLines(t, "warnings", im.warnings, []string{
		`check Web_Alive is written as "web_alive": a vitals check name is lower case letters, digits and - _ . inside, at most 63 characters`,
		`check db ready! is written as "db-ready": a vitals check name is lower case letters, digits and - _ . inside, at most 63 characters`,
		`check -edge- is written as "edge": a vitals check name is lower case letters, digits and - _ . inside, at most 63 characters`,
		`check web is written as "web-2": "web" is taken`,
		`check WEB is written as "web-3": "web" is taken`,
		`check shutdown is written as "shutdown-check": "shutdown" names a line of the probe endpoints`,
		`check monitor is written as "monitor-check": "monitor" names a line of the probe endpoints`,
		`check ??? is written as "check": a vitals check name is lower case letters, digits and - _ . inside, at most 63 characters`,
		"check " + long + ` is written as "` + strings.Repeat("a", 63) + `": a vitals check name is lower case letters, digits and - _ . inside, at most 63 characters`,
		"check " + long + ` is written as "` + strings.Repeat("a", 61) + `-2": "` + strings.Repeat("a", 63) + `" is taken`,
	})
}

// The importer writes a file and loads it back with config: it builds no
// part of the agent, so it imports none (its tests may, to run what it
// wrote).
func TestTheImporterImportsNoPartOfTheAgent(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, part := range []string{"supervise", "hooks", "logwatch", "api", "deps", "kubereport", "metrics", "servers"} {
			if pkg == "github.com/vitals-dev/vitals/cmd/vitals/internal/"+part {
				t.Errorf("the importer imports %s", pkg)
			}
		}
		if strings.HasPrefix(pkg, "github.com/vitals-dev/vitals/grpchealth") || strings.HasPrefix(pkg, "google.golang.org/grpc") {
			t.Errorf("the importer imports %s", pkg)
		}
	}
}

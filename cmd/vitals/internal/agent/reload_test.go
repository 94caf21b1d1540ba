package agent

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

// parsed is a file of the test's, with the checks of base followed by
// extra.
func parsed(t *testing.T, text string) *config.Config {
	t.Helper()
	c, err := config.Parse("vitals.yaml", []byte("listen: 127.0.0.1:0\n"+text), os.LookupEnv, kinds.All)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return c
}

// The plan of a reload: what it adds, changes, retimes and removes, in the
// file's order, and what it refuses, every reason with its position.
func TestPlanReload(t *testing.T) {
	const base = `checks:
  web: {http: {url: "http://127.0.0.1:1/"}, period: 10s}
  conf: {file: {path: /etc/hostname}}
  loop: {heartbeat: {ttl: 1m}}
  boot: {file: {path: /etc/hostname}, level: startup}
`
	fixed := func(ch config.Check) string {
		if ch.Fed.Feed != 0 {
			return "a heartbeat"
		}
		return ""
	}
	for _, tc := range []struct {
		name          string
		next          string
		startupPassed bool
		want          string
	}{
		{"the same file", base, true, "added [] changed [] retimed [] removed []"},
		{"the same checks, moved", `checks:
  boot: {file: {path: /etc/hostname}, level: startup}
  loop: {heartbeat: {ttl: 1m}}
  conf: {file: {path: /etc/hostname}}
  web: {http: {url: "http://127.0.0.1:1/"}, period: 10s}
`, true, "added [] changed [] retimed [] removed []"},
		{"timing and thresholds alone", strings.Replace(base, "period: 10s", "period: 2s, failure-threshold: 1", 1), true,
			"added [] changed [] retimed [web] removed []"},
		{"another target", strings.Replace(base, "127.0.0.1:1/", "127.0.0.1:2/", 1), true,
			"added [] changed [web] retimed [] removed []"},
		{"another level", strings.Replace(base, "conf: {file: {path: /etc/hostname}}", "conf: {file: {path: /etc/hostname}, level: live}", 1), true,
			"added [] changed [conf] retimed [] removed []"},
		{"added and removed", strings.Replace(base, "  conf: {file: {path: /etc/hostname}}\n", "  more: {tcp: {address: \"127.0.0.1:1\"}}\n", 1), true,
			"added [more] changed [] retimed [] removed [conf]"},
		{"a heartbeat changed", strings.Replace(base, "ttl: 1m", "ttl: 2m", 1), true,
			"vitals.yaml:5:21: checks.loop.heartbeat: changed: a heartbeat, which a reload does not change; restart vitals to apply it"},
		{"a heartbeat removed", strings.Replace(base, "  loop: {heartbeat: {ttl: 1m}}\n", "", 1), true,
			"vitals.yaml: checks.loop: removed: a heartbeat, which a reload does not remove; restart vitals to apply it"},
		{"a heartbeat added", base + "  hb: {heartbeat: {ttl: 1m}}\n", true,
			"vitals.yaml:7:19: checks.hb.heartbeat: added: a heartbeat, which a reload does not add or change; restart vitals to apply it"},
		{"a startup check changed after startup", strings.Replace(base, "level: startup", "level: startup, success-threshold: 2", 1), true,
			"added [] changed [] retimed [boot] removed []"},
		{"a startup check added after startup", base + "  boot2: {file: {path: /etc/hostname}, level: startup}\n", true,
			"vitals.yaml:7:17: checks.boot2.file: a startup check cannot start anew once startup has passed: it latches until vitals restarts"},
		{"a startup check added before startup", base + "  boot2: {file: {path: /etc/hostname}, level: startup}\n", false,
			"added [boot2] changed [] retimed [] removed []"},
		{"parts of the file besides checks", "ui: false\ndrain: 5s\ndetails: all\nservice-info: {service-id: web}\n" + base, true,
			"added [] changed [] retimed [] removed [] sections [details ui service-info drain]"},
		{"the addresses vitals serves at", "grpc-listen: 127.0.0.1:0\napi: /tmp/elsewhere.sock\n" + base, true,
			"vitals.yaml: grpc-listen: changed: " + fixedGRPC + "\nvitals.yaml: api: changed: " + fixedAPI},
		{"another part of the file, and a check", "ui: false\ndrain: 5s\napi: /tmp/elsewhere.sock\n" + strings.Replace(base, "ttl: 1m", "ttl: 2m", 1), true,
			"vitals.yaml: api: changed: " + fixedAPI + "\n" +
				"vitals.yaml:8:21: checks.loop.heartbeat: changed: a heartbeat, which a reload does not change; restart vitals to apply it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := planReload(parsed(t, base), parsed(t, tc.next), tc.startupPassed, fixed)
			got := fmt.Sprintf("added %v changed %v retimed %v removed %v", names(p.added), names(p.changed), names(p.retimed), p.removed)
			if len(p.sections) > 0 {
				got += fmt.Sprintf(" sections %v", p.sections)
			}
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TLS turned on or off is refused, as the kubelet's probes name their
// scheme; another certificate is applied.
func TestPlanReloadOfTLS(t *testing.T) {
	const one = "checks: {c: {file: {path: /etc/hostname}}}\n"
	off := parsed(t, one)
	on := parsed(t, one)
	on.TLS = &config.TLS{CertFile: "/c.pem", KeyFile: "/k.pem"}
	other := parsed(t, one)
	other.TLS = &config.TLS{CertFile: "/d.pem", KeyFile: "/k.pem"}
	none := func(config.Check) string { return "" }
	for _, tc := range []struct {
		name     string
		old, new *config.Config
		want     string
	}{
		{"turned on", off, on, "vitals.yaml: tls: changed: " + fixedTLS},
		{"turned off", on, off, "vitals.yaml: tls: changed: " + fixedTLS},
		{"other files", on, other, "[tls]"},
	} {
		p, err := planReload(tc.old, tc.new, false, none)
		got := fmt.Sprint(p.sections)
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

// A heartbeat keeps its ttl for its life: any change of it, timing
// alone too, makes it anew.
func TestPlanReloadMakesAHeartbeatAnew(t *testing.T) {
	const hb = "checks:\n  hb: {heartbeat: {ttl: 1m}}\n"
	none := func(config.Check) string { return "" }
	for _, next := range []string{
		strings.Replace(hb, "ttl: 1m", "ttl: 2m", 1),
		strings.Replace(hb, "ttl: 1m}", "ttl: 1m}, stable-for: 5s", 1),
	} {
		p, err := planReload(parsed(t, hb), parsed(t, next), true, none)
		if err != nil || fmt.Sprint(names(p.changed), names(p.retimed)) != "[hb] []" {
			t.Errorf("%s: changed %v retimed %v, %v; want hb changed", next, names(p.changed), names(p.retimed), err)
		}
	}
	// A startup heartbeat made anew would start over, which a startup
	// check cannot once startup has passed: refused, timing alone too.
	startup := strings.Replace(hb, "ttl: 1m}", "ttl: 1m}, level: startup", 1)
	next := strings.Replace(startup, "level: startup", "level: startup, stable-for: 5s", 1)
	if _, err := planReload(parsed(t, startup), parsed(t, next), true, none); err == nil || !strings.Contains(err.Error(), "a startup check cannot start anew") {
		t.Errorf("a startup heartbeat retimed after startup: %v, want it refused", err)
	}
}

// The services of two files, by name: a changed definition is applied, a
// service added or removed, or moved in the order, is refused.
func TestPlanReloadOfServices(t *testing.T) {
	const two = `services:
  web: {command: [sleep, "1"]}
  db: {command: [sleep, "2"], restart: always}
checks: {c: {file: {path: /etc/hostname}}}
`
	none := func(config.Check) string { return "" }
	for _, tc := range []struct{ next, want string }{
		{two, "[] []"},
		{strings.Replace(two, `restart: always`, `restart: on-failure, env: {A: "1"}`, 1), "[services] [db]"},
		{strings.Replace(two, `[sleep, "1"]}`, `[sleep, "3"], dir: /tmp}`, 1), "[services] [web]"},
		{strings.Replace(two, `restart: always`, `after: [web]`, 1), "vitals.yaml: services.db: " + fixedOrder},
		{strings.Replace(two, `  db: {command: [sleep, "2"], restart: always}`, `  cache: {command: [sleep, "2"]}`, 1),
			"vitals.yaml: services: changed: " + fmt.Sprintf(fixedServices, "added cache; removed db")},
	} {
		p, err := planReload(parsed(t, two), parsed(t, tc.next), true, none)
		got := fmt.Sprint(p.sections, " ", p.services)
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tc.next, got, tc.want)
		}
	}
}

func names(chs []config.Check) []string {
	out := []string{}
	for _, ch := range chs {
		out = append(out, ch.Name)
	}
	return out
}

// Reloads that retime checks, while clients ask /readyz: every answer is
// 200, and the checks keep their results (under -race, with the agent's
// servers and the Monitor at work).
func TestReloadsKeepEveryAnswerOfTheChecksTheyRetime(t *testing.T) {
	file := os.Args[0]
	checks := func(period string) string {
		return fmt.Sprintf("checks:\n  a: {file: {path: %s}, period: %s}\n  b: {file: {path: %s}, period: 10s}\n", file, period, file)
	}
	first := parse(t, checks("1s"))
	var mu sync.Mutex
	next := first
	r := startReloading(t, first, func() (*config.Config, error) {
		mu.Lock()
		defer mu.Unlock()
		return next, nil
	})
	waitFor(func() bool { return r.readyz(t) == 200 })
	stop := make(chan struct{})
	var askers sync.WaitGroup
	for range 4 {
		askers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if code := r.readyz(t); code != 200 {
					t.Errorf("/readyz answered %d during the reloads", code)
					return
				}
			}
		})
	}
	for i := range 100 {
		c := parse(t, checks([]string{"2s", "1s"}[i%2]))
		c.API = first.API // parse gives each file a socket of its own
		mu.Lock()
		next = c
		mu.Unlock()
		out, err := r.a.Reload("test")
		if err != nil || fmt.Sprint(out.Retimed) != "[a]" {
			t.Fatalf("reload %d: %+v %v", i, out, err)
		}
	}
	close(stop)
	askers.Wait()
	if st, _ := r.a.monitor.CheckState("a"); st.Runs == 0 || st.Period != time.Second {
		t.Fatalf("a after the reloads: %+v, want its result kept and the last period", st)
	}
}

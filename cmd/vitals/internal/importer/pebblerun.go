package importer

import (
	"fmt"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
)

// The Pebble layer that runs the vitals a layer was imported into, so that
// Pebble, and Juju through it, see vitals's verdict: vitals as the service,
// restarted when /livez fails, and Pebble's health as vitals's. It is the
// layer docs/pebble.md shows, with the same names.

const (
	// pebbleVitalsService names vitals's service when the layer imported
	// has no one service whose place it takes.
	pebbleVitalsService = "vitals"
	// pebbleVitalsCommand is how Pebble runs vitals: from $PATH, with the file
	// in Pebble's working directory.
	pebbleVitalsCommand = "vitals run -c vitals.yaml"
	// pebbleKillMargin is what kill-delay gives vitals past its services'
	// stops and its drain: the probe server's answers in flight (5s, the
	// agent's shutdownTimeout), and the hooks' last events.
	pebbleKillMargin = 5 * time.Second
	// The checks on vitals, as docs/pebble.md has them: ready every 5s
	// (Juju's probes' period), a failure acted on at once, as vitals's own
	// checks have decided already; alive every 10s, down after 3 failures,
	// so that neither one slow answer nor vitals's own restart of a
	// workload (its /livez fails until the workload has stopped) restarts
	// vitals; 3s is Pebble's timeout.
	pebbleAlive = "vitals-alive"
	pebbleReady = "vitals-ready"
)

// pebbleRunLayer is the Pebble layer that runs vitals in the place of the
// layer imported (source): vitals's service takes the name of the layer's
// one service, or is vitals; its kill-delay leaves vitals time to stop its
// services one after another (stop, their stop-timeouts summed), with no
// drain, as the file has none; it shuts Pebble down where the layer did
// (ex), and is otherwise restarted, Pebble's default.
func pebbleRunLayer(source string, services []*pebbleService, stop time.Duration, ex exits) []byte {
	name := pebbleVitalsService
	if len(services) == 1 {
		name = services[0].name
	}
	var w writer
	w.comment(0, "Made by vitals import pebble from "+source+": the layer that runs vitals,")
	w.comment(0, "which runs what "+source+" ran and judges its checks. Add it in that layer's")
	w.comment(0, "place.")
	w.field(0, field{key: "summary", value: "vitals with the services and checks of " + source})
	w.line(0, "services:")
	w.line(1, scalar(name)+":")
	w.field(2, field{key: "override", value: "replace", raw: true})
	w.field(2, field{key: "command", value: pebbleVitalsCommand, raw: true})
	w.field(2, field{key: "startup", value: "enabled", raw: true})
	var stops string
	switch len(services) {
	case 0:
	case 1:
		stops = fmt.Sprintf("vitals.yaml's stop-timeout (%s) + ", durationText(stop))
	default:
		stops = fmt.Sprintf("vitals.yaml's stop-timeouts, summed (%s) + ", durationText(stop))
	}
	w.field(2, field{key: "kill-delay", value: durationText(stop + pebbleKillMargin), raw: true,
		note: fmt.Sprintf("%sdrain (0s) + %s", stops, durationText(pebbleKillMargin))})
	if ex.success {
		w.field(2, field{key: "on-success", value: "shutdown", raw: true, note: "vitals exits 0 where " + source + " shut pebble down"})
	}
	if ex.failure {
		w.field(2, field{key: "on-failure", value: "shutdown", raw: true, note: "vitals exits non-zero where " + source + " shut pebble down"})
	}
	w.line(2, "on-check-failure:")
	w.field(3, field{key: pebbleAlive, value: "restart", raw: true})
	w.line(0, "checks:")
	for _, c := range []struct {
		name, level, path string
		period            time.Duration
		threshold         int
	}{
		{pebbleAlive, "alive", "/livez", 10 * time.Second, 3},
		{pebbleReady, "ready", "/readyz", 5 * time.Second, 1},
	} {
		w.line(1, c.name+":")
		w.field(2, field{key: "override", value: "replace", raw: true})
		w.field(2, field{key: "level", value: c.level, raw: true})
		w.field(2, field{key: "period", value: durationText(c.period), raw: true})
		w.field(2, field{key: "timeout", value: durationText(3 * time.Second), raw: true})
		w.field(2, field{key: "threshold", value: fmt.Sprint(c.threshold), raw: true})
		w.line(2, "http:")
		w.field(3, field{key: "url", value: "http://localhost" + config.DefaultListen + c.path, raw: true})
	}
	return []byte(w.b.String())
}

// pebbleLayerTrailer is the end of the file: where the layer that runs
// vitals is, or, without layerFile, the layer itself as comments, without
// the comment at its top, which the trailer's own replaces.
func pebbleLayerTrailer(layer []byte, layerFile string) []string {
	if layerFile != "" {
		return []string{"Pebble runs this vitals with the layer in " + layerFile + "."}
	}
	out := []string{
		"The Pebble layer that runs this vitals, so that Pebble and Juju see its",
		`verdict, to add in the place of the layer imported: take it without the "# ",`,
		"or give --layer FILE to have it in a file.",
		"",
	}
	lines := strings.Split(strings.TrimSuffix(string(layer), "\n"), "\n")
	for len(lines) > 0 && strings.HasPrefix(lines[0], "#") {
		lines = lines[1:]
	}
	return append(out, lines...)
}

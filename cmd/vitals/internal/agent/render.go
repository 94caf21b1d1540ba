package agent

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/hooks"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/signals"
)

// Render writes a file back as YAML with every default filled in (vitals
// validate --print), under the line that names its schema for editors
// (config.SchemaComment). A kind's block is written as the file has it,
// ${VAR} unexpanded, so that a secret from the environment is never
// printed; a password written into a URL is masked.
func Render(c *config.Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nlisten: %q\n", config.SchemaComment, c.Listen)
	if c.GRPCListen != "" {
		fmt.Fprintf(&b, "grpc-listen: %q\n", c.GRPCListen)
	}
	fmt.Fprintf(&b, "api: %q\n", c.API)
	if c.APITokenFile != "" {
		fmt.Fprintf(&b, "api-token-file: %q\n", c.APITokenFile)
	}
	fmt.Fprintf(&b, "details: %v\nui: %v\n", c.Details, c.UI)
	if t := c.TLS; t != nil {
		fmt.Fprintf(&b, "tls:\n  cert-file: %q\n  key-file: %q\n", t.CertFile, t.KeyFile)
		if t.ClientCAFile != "" {
			fmt.Fprintf(&b, "  client-ca-file: %q\n", t.ClientCAFile)
		}
	}
	if c.Auth.TokenFile != "" {
		fmt.Fprintf(&b, "auth:\n  token-file: %q\n", c.Auth.TokenFile)
	}
	fmt.Fprintf(&b, "drain: %v\n", c.Drain)
	si := c.ServiceInfo
	fmt.Fprintf(&b, "service-info:\n  service-id: %q\n", c.Redact(si.ServiceID))
	if si.Version != "" {
		fmt.Fprintf(&b, "  version: %q\n", c.Redact(si.Version))
	}
	if si.ReleaseID != "" {
		fmt.Fprintf(&b, "  release-id: %q\n", c.Redact(si.ReleaseID))
	}
	if c.Shorthand {
		b.WriteString("service:\n")
		renderService(&b, c, c.Services[0], "  ")
	} else if len(c.Services) > 0 {
		b.WriteString("services:\n")
		for _, s := range c.Services {
			fmt.Fprintf(&b, "  %s:\n", s.Name)
			renderService(&b, c, s, "    ")
		}
	}
	renderHooks(&b, c)
	if k := c.Kubernetes; k != nil {
		fmt.Fprintf(&b, "kubernetes:\n  events: %v\n", k.Events)
		if k.Condition != "" {
			fmt.Fprintf(&b, "  condition: %q\n", k.Condition)
		}
	}
	if len(c.Checks) == 0 {
		b.WriteString("checks: {}\n") // a workload's file may have none
	} else {
		b.WriteString("checks:\n")
	}
	for _, ch := range c.Checks {
		fmt.Fprintf(&b, "  %s:\n    level: %s\n", ch.Name, ch.Level)
		fmt.Fprintf(&b, "    %s: %s\n", ch.Kind, c.Redact(ch.Source))
		fmt.Fprintf(&b, "    on-failure: %s\n", ch.OnFailure)
		if ch.Service != "" && len(c.Services) > 1 {
			fmt.Fprintf(&b, "    service: %s\n", ch.Service)
		}
		if ch.StopTimeout > 0 {
			fmt.Fprintf(&b, "    stop-timeout: %v\n", ch.StopTimeout)
		}
		if ch.Disabled {
			b.WriteString("    startup: disabled\n")
		}
		fmt.Fprintf(&b, "    component-type: %q\n", ch.ComponentType)
		if ch.Fed.Feed == 0 { // a heartbeat's ttl, a watchdog's limit, is all its timing but stable-for
			fmt.Fprintf(&b, "    period: %v\n    timeout: %v\n    initial-delay: %v\n", ch.Period, ch.Timeout, ch.InitialDelay)
			fmt.Fprintf(&b, "    success-threshold: %d\n    failure-threshold: %d\n", ch.SuccessThreshold, ch.FailureThreshold)
		}
		fmt.Fprintf(&b, "    stable-for: %v\n", ch.StableFor)
	}
	if c.Origins != nil {
		return withOrigins(b.String(), c.Origins)
	}
	return b.String()
}

// withOrigins ends each line of rendered, a file as Render writes it, whose
// key the layers give with a comment that says where they give it
// (config.Config.Origins): # FILE:LINE, or, for an entry or a mapping that
// layers merged, each layer's place in order. A line without one is a
// default. The items of a list (hooks) are not followed into.
func withOrigins(rendered string, origins map[string][]config.Position) string {
	type level struct {
		indent int
		key    string
	}
	var b strings.Builder
	var stack []level
	for _, line := range strings.SplitAfter(rendered, "\n") {
		text := strings.TrimSuffix(line, "\n")
		trimmed := strings.TrimLeft(text, " ")
		indent := len(text) - len(trimmed)
		key, _, isKey := strings.Cut(trimmed, ":")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			b.WriteString(line)
			continue
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		if strings.HasPrefix(trimmed, "- ") || !isKey {
			stack = append(stack, level{indent, "-"}) // an item: what is under it has no origin of its own
			b.WriteString(line)
			continue
		}
		stack = append(stack, level{indent, strings.Trim(key, `"`)})
		keys := make([]string, len(stack))
		for i, l := range stack {
			keys[i] = l.key
		}
		from := origins[strings.Join(keys, ".")]
		if len(from) == 0 || slices.Contains(keys, "-") {
			b.WriteString(line)
			continue
		}
		where := make([]string, len(from))
		for i, p := range from {
			where[i] = p.String()
		}
		fmt.Fprintf(&b, "%s  # %s%s", text, strings.Join(where, ", "), line[len(text):])
	}
	return b.String()
}

// renderService writes a service's fields, each line under indent.
func renderService(b *strings.Builder, c *config.Config, s config.Service, indent string) {
	if len(s.Command) > 0 {
		fmt.Fprintf(b, "%scommand: [%s]\n", indent, quotedList(s.Command))
	}
	if len(s.Env) > 0 {
		fmt.Fprintf(b, "%senv:\n", indent)
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			fmt.Fprintf(b, "%s  %s: %q\n", indent, k, c.Redact(s.Env[k]))
		}
	}
	if s.Dir != "" {
		fmt.Fprintf(b, "%sdir: %q\n", indent, s.Dir)
	}
	fmt.Fprintf(b, "%srestart: %s\n", indent, s.Restart)
	if len(s.RestartRules) > 0 {
		fmt.Fprintf(b, "%srestart-rules:\n", indent)
		for _, r := range s.RestartRules {
			fmt.Fprintf(b, "%s  - %s\n", indent, r)
		}
	}
	fmt.Fprintf(b, "%sbackoff: {initial: %v, max: %v}\n%sstop-signal: %s\n%sstop-timeout: %v\n",
		indent, s.BackoffInitial, s.BackoffMax, indent, signals.SignalName(s.StopSignal), indent, s.StopTimeout)
	if s.NotificationFD != 0 {
		fmt.Fprintf(b, "%snotification-fd: %d\n", indent, s.NotificationFD)
	}
	for _, f := range []struct {
		key   string
		names []string
	}{{"after", s.After}, {"before", s.Before}, {"requires", s.Requires}} {
		if len(f.names) > 0 {
			fmt.Fprintf(b, "%s%s: [%s]\n", indent, f.key, strings.Join(f.names, ", "))
		}
	}
}

// quotedList writes words as the items of a YAML flow list.
func quotedList(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = strconv.Quote(w)
	}
	return strings.Join(quoted, ", ")
}

// renderHooks writes the file's hooks, if any, with every default filled in
// and their secrets masked: a token in a header, and a webhook's URL shown as
// the logs show it (no query, nothing past its first path segment).
func renderHooks(b *strings.Builder, c *config.Config) {
	if len(c.Hooks) == 0 {
		return
	}
	redacted := func(words []string) string {
		out := make([]string, len(words))
		for i, w := range words {
			out[i] = c.Redact(w)
		}
		return quotedList(out)
	}
	b.WriteString("hooks:\n")
	for _, h := range c.Hooks {
		on := make([]string, len(h.On))
		for i, t := range h.On {
			on[i] = string(t)
		}
		fmt.Fprintf(b, "  - name: %s\n    on: [%s]\n", h.Name, strings.Join(on, ", "))
		if e := h.Exec; e != nil {
			fmt.Fprintf(b, "    exec: {command: [%s], timeout: %v}\n", redacted(e.Command), e.Timeout)
		}
		if w := h.Webhook; w != nil {
			fmt.Fprintf(b, "    webhook:\n      url: %q\n      method: %s\n", c.Redact(hooks.RedactedURL(w.URL)), w.Method)
			if len(w.Header) > 0 {
				b.WriteString("      headers:\n")
				for _, name := range slices.Sorted(maps.Keys(w.Header)) {
					fmt.Fprintf(b, "        %q: [%s]\n", name, redacted(w.Header[name]))
				}
			}
			renderRetry(b, w.HookRetry)
		}
		if p := h.PebbleNotice; p != nil {
			fmt.Fprintf(b, "    pebble-notice:\n      socket: %q\n      repeat-after: %v\n", p.Socket, p.RepeatAfter)
			renderRetry(b, p.HookRetry)
		}
	}
}

// renderRetry writes a hook's timeout, retries and backoff.
func renderRetry(b *strings.Builder, r config.HookRetry) {
	fmt.Fprintf(b, "      timeout: %v\n      retries: %d\n      backoff: {initial: %v, max: %v}\n",
		r.Timeout, r.Attempts-1, r.BackoffInitial, r.BackoffMax)
}

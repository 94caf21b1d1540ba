package config

import (
	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/health"
)

// A Section is one mapping of the file as the reference
// (docs/reference/config.md) and the schema
// (docs/reference/vitals.schema.json) show it: where it is, and its fields.
type Section struct {
	// Path is where the mapping is, as the reference writes it, such as
	// service.backoff or hooks[].webhook; "" for the top level.
	Path string
	// Doc says what the mapping is, in a sentence.
	Doc    string
	Fields []Field
	// Rules are what the schema says of the mapping beyond its fields, in
	// JSON Schema's words: the loader's rules on which fields go together.
	Rules Schema
}

// Sections are the file's mappings but the kinds' blocks (package kinds
// has those), in the reference's order. Their fields read into values of
// their own, which nothing uses.
func Sections() []Section {
	var c Check
	return []Section{
		{Path: "", Doc: "The top level of vitals.yaml.", Fields: topFields(&Config{}, new(ast.Node)),
			// Checks, a workload, or both (parseIn).
			Rules: Schema{"anyOf": []Schema{{"required": []string{"service"}}, {"required": []string{"services"}},
				{"required": []string{"checks"}, "properties": Schema{"checks": Schema{"minProperties": 1}}}}}},
		{Path: "service-info", Doc: "What the IETF health+json answers (`?format=json`, `Accept: application/health+json` or `application/json`) say of the service at their top, whether or not vitals supervises it (service:).",
			Fields: serviceInfoFields(&health.ServiceInfo{})},
		{Path: "tls", Doc: "HTTPS on listen, and the client certificates that prove who a client is.", Fields: tlsFields(&TLS{})},
		{Path: "history", Doc: "Where the checks' kept results are saved, so that a restart of vitals keeps them.", Fields: historyFields(&History{})},
		{Path: "auth", Doc: "How a client off loopback proves it may see what one on loopback sees.", Fields: authFields(&Auth{})},
		{Path: "checks.NAME", Doc: "A check: its level, its timing and exactly one kind (below). A heartbeat or a watchdog takes none of the timing fields but stable-for: its ttl or limit decides.",
			Fields: checkFields(&c, new(string))},
		{Path: "service", Doc: "The one workload, with its defaults filled in as `vitals validate --print` shows them.", Fields: serviceFields(&Service{}, &serviceOrder{})},
		{Path: "service.backoff", Doc: "The wait before a restart.", Fields: serviceBackoffFields(&Service{})},
		{Path: "services.NAME", Doc: "A workload of several: the fields of service:, with its order among the others.", Fields: serviceFields(&Service{}, &serviceOrder{}),
			// A command, but in an entry of a layer that merges over or
			// removes an earlier one (override).
			Rules: Schema{"if": Schema{"required": []string{"override"}}, "else": Schema{"required": []string{"command"}}}},
		{Path: "services.NAME.restart-rules[]", Doc: "A restart rule: an action for some exit codes.", Fields: restartRuleFields(&RestartRule{}, new(string)),
			Rules: Schema{"required": []string{"action", "exit-codes"}}},
		{Path: "services.NAME.restart-rules[].exit-codes", Doc: "The exit codes a rule is for.", Fields: exitCodesFields(&RestartRule{}, new(string)),
			Rules: Schema{"required": []string{"operator", "values"}}},
		{Path: "hooks[]", Doc: "A hook, run off the engine's path for each event it is on.", Fields: hookFields(&Hook{}, new(string), new(bool)),
			// One of exec, webhook and pebble-notice, the first two with on:
			// (Decoder.hook).
			Rules: Schema{"oneOf": []Schema{{"required": []string{"exec", "on"}}, {"required": []string{"webhook", "on"}},
				{"required": []string{"pebble-notice"}}}}},
		{Path: "hooks[].exec", Doc: "A command run for each event (as a mapping; a list of words is its command).", Fields: execHookFields(&ExecHook{})},
		{Path: "hooks[].webhook", Doc: "An HTTP request sent for each event, with its JSON as the body.", Fields: webhookFields(&WebhookHook{}, new(int))},
		{Path: "hooks[].webhook.backoff", Doc: "The waits between a webhook's attempts.", Fields: hookBackoffFields(&HookRetry{}, "the receiver")},
		{Path: "hooks[].pebble-notice", Doc: "A Pebble custom notice recorded for each event, through Pebble's API on its socket, as `pebble notify` records one.",
			Fields: pebbleNoticeFields(&PebbleNoticeHook{}, new(int))},
		{Path: "hooks[].pebble-notice.backoff", Doc: "The waits between the attempts at recording a notice.", Fields: hookBackoffFields(&HookRetry{}, "Pebble")},
		{Path: "kubernetes", Doc: "What the agent tells Kubernetes about its pod; at least one of the two.", Fields: kubernetesFields(&Kubernetes{}),
			// Something to tell (Decoder.kubernetes): events: false is nothing.
			Rules: Schema{"anyOf": []Schema{{"required": []string{"condition"}},
				{"required": []string{"events"}, "properties": Schema{"events": Schema{"not": Schema{"const": false}}}}}}},
	}
}

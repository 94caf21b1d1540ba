package config

import (
	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/health"
)

// A Section is one mapping of the file as the reference
// (docs/reference/config.md) shows it: where it is, and its fields.
type Section struct {
	// Path is where the mapping is, as the reference writes it, such as
	// service.backoff or hooks[].webhook; "" for the top level.
	Path string
	// Doc says what the mapping is, in a sentence.
	Doc    string
	Fields []Field
}

// Sections are the file's mappings but the kinds' blocks (package kinds
// has those), in the reference's order. Their fields read into values of
// their own, which nothing uses.
func Sections() []Section {
	var c Check
	return []Section{
		{"", "The top level of vitals.yaml.", topFields(&Config{}, new(ast.Node))},
		{"service-info", "What the IETF health+json answers (`?format=json`, `Accept: application/health+json` or `application/json`) say of the service at their top, whether or not vitals supervises it (service:).",
			serviceInfoFields(&health.ServiceInfo{})},
		{"checks.NAME", "A check: its level, its timing and exactly one kind (below). A heartbeat takes none of the timing fields: its ttl decides.",
			checkFields(&c, new(string))},
		{"service", "The workload, with its defaults filled in as `vitals validate --print` shows them.", serviceFields(&Service{})},
		{"service.backoff", "The wait before a restart.", serviceBackoffFields(&Service{})},
		{"hooks[]", "A hook, run off the engine's path for each event it is on.", hookFields(&Hook{}, new(string), new(bool))},
		{"hooks[].exec", "A command run for each event (as a mapping; a list of words is its command).", execHookFields(&ExecHook{})},
		{"hooks[].webhook", "An HTTP request sent for each event, with its JSON as the body.", webhookFields(&WebhookHook{}, new(int))},
		{"hooks[].webhook.backoff", "The waits between a webhook's attempts.", webhookBackoffFields(&WebhookHook{})},
		{"kubernetes", "What the agent tells Kubernetes about its pod; at least one of the two.", kubernetesFields(&Kubernetes{})},
	}
}

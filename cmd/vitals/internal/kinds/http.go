package kinds

import (
	"errors"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// HTTP is an HTTP request whose answer must have a status that passes.
var HTTP = define(Kind{
	Name:    "http",
	Summary: "An HTTP request whose status passes (200-399 by default), with optional body patterns.",
	Example: "{url: http://localhost:8080/healthz}",
	CLI:     &CLI{Schemes: []string{"http", "https"}, Target: "http://HOST[:PORT]/PATH, https://…"},
	Import:  &Import{Kubelet: "httpGet", Pebble: "http"},
}, block[probe.HTTPSpec]{
	fields: func(s *probe.HTTPSpec) []config.Field {
		return append([]config.Field{
			{Key: "url", Value: config.String(&s.URL), Doc: "Required: http:// or https://."},
			{Key: "method", Value: config.String(&s.Method), Default: "GET", Doc: "In capitals, as HTTP methods are."},
			{Key: "status", Value: config.String(&s.Status), Default: probe.DefaultStatus,
				Doc: "The statuses that pass: codes and ranges, such as 200,204,300-399. The default is the kubelet's rule."},
			{Key: "headers", Value: config.Headers((*map[string][]string)(&s.Header)),
				Doc: "Sent with the request; a Host header sets the virtual host. Their values are secrets, never printed."},
			{Key: "body", Value: config.String(&s.Body),
				Doc: "A regular expression the body (its first 10 KiB) must match."},
			{Key: "not-body", Value: config.String(&s.NotBody),
				Doc: "A regular expression the body (its first 10 KiB) must not match."},
		}, tlsFields(&s.TLS)...)
	},
	build: func(_ string, s probe.HTTPSpec, _ Env) (health.Checker, error) {
		if s.URL == "" {
			return nil, errors.New("url is required")
		}
		return probe.HTTP(s)
	},
})

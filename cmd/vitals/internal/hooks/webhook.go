package hooks

import (
	"net/http"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/version"
)

// newWebhook is the request of a webhook: the event's JSON, sent to its URL
// with its headers.
func newWebhook(s config.WebhookHook) *sender {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = nil // see the package doc: a hook is for a neighbour
	header := http.Header{}
	header.Set("Content-Type", "application/json")
	header.Set("User-Agent", "vitals/"+version.Version)
	for name, values := range s.Header {
		header.Del(name)
		for _, v := range values {
			header.Add(name, v)
		}
	}
	return &sender{
		retry:  s.HookRetry,
		method: s.Method,
		url:    s.URL,
		what:   s.Method + " " + RedactedURL(s.URL),
		client: &http.Client{
			Transport: transport,
			// A redirect is an answer: a POST that followed one would arrive
			// as a GET, without the event.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		header: header,
	}
}

// Command bare is the limit of the /readyz comparison: a net/http handler
// that answers "ok" with the headers vitals's probe path sets, and does
// nothing else.
package main

import (
	"net/http"

	"github.com/vitals-dev/vitals/bench/servers/internal/serve"
)

// Shared header values, assigned rather than Set, as vitals's handler does.
var (
	textPlain = []string{"text/plain; charset=utf-8"}
	noStore   = []string{"no-store"}
	nosniff   = []string{"nosniff"}
	okBody    = []byte("ok")
)

func main() {
	serve.Checks() // parses -addr; the limit has no checks
	serve.Run(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr["Cache-Control"] = noStore
		hdr["X-Content-Type-Options"] = nosniff
		hdr["Content-Type"] = textPlain
		w.WriteHeader(http.StatusOK)
		w.Write(okBody)
	}))
}

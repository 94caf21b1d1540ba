// Command controllerruntime serves controller-runtime's healthz.Handler with
// -checks checkers like healthz.Ping on /readyz and /healthz, mounted the way
// a manager mounts them (pkg/manager's addHealthProbeServer): a ServeMux
// with http.StripPrefix, for the path and its subpaths.
package main

import (
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/vitals-dev/vitals/bench/servers/internal/serve"
)

func main() {
	n := serve.Checks()
	checks := make(map[string]healthz.Checker, n)
	for i := range n {
		checks[serve.CheckName(i)] = func(*http.Request) error { return nil }
	}
	mux := http.NewServeMux()
	for _, path := range []string{"/readyz", "/healthz"} {
		h := &healthz.Handler{Checks: checks}
		mux.Handle(path, http.StripPrefix(path, h))
		mux.Handle(path+"/", http.StripPrefix(path, h))
	}
	serve.Run(mux)
}

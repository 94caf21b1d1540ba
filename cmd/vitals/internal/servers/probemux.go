package servers

import "net/http"

// ProbeHandler returns what the probe listener serves: probes (a Monitor's
// handler) at /livez, /readyz, /startupz, /healthz and under them, metrics
// at /metrics, and page, unless nil, at / and under /ui/. Any other path is
// probes' to answer (404).
//
// The probe endpoints' own paths, the requests the kubelet and load
// balancers send thousands of times a second, go to probes straight: a
// ServeMux would send them there too (probes is its fallback, at /, and
// such a path is clean, so the mux never redirects it), but only after
// cleaning the path, matching it against every pattern and allocating its
// match, which costs more than probes' answer itself. Every other path goes
// through the mux.
func ProbeHandler(probes, metrics, page http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", probes)
	mux.Handle("/metrics", metrics)
	if page != nil {
		mux.Handle("/{$}", page)
		mux.Handle("/ui/", page)
	}
	return probeMux{probes: probes, mux: mux}
}

type probeMux struct{ probes, mux http.Handler }

// ServeHTTP is on the probes' path: it allocates nothing.
func (h probeMux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/readyz", "/livez", "/healthz", "/startupz":
		h.probes.ServeHTTP(w, r)
	default:
		h.mux.ServeHTTP(w, r)
	}
}

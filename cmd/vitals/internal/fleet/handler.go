package fleet

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/webpage"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/wire"
)

// Handler serves the fleet's page, read-only:
//
//	GET /                            the page
//	GET /fleet/app.js, /fleet/style.css
//	                                 its script and style
//	GET /api/fleet[?namespace=NS&selector=SEL&status=S]
//	                                 the view (View) of the pods that the filters select: a namespace,
//	                                 a label selector as kubectl -l spells it, and a status (passing,
//	                                 failing, unknown, not-ready); 503 until the first list is done
//	GET /api/stream                  server-sent events: a "change" with the version of the caches
//	                                 at once, then at each change (coalesced), for the page to read
//	                                 /api/fleet again
//
// GET and HEAD only (405 otherwise). The caller guards it (access.Guard),
// and ends its streams through the server's BaseContext.
func (f *Fleet) Handler() http.Handler {
	var nonce [6]byte
	rand.Read(nonce[:]) // never fails (crypto/rand)
	// views exists from the start: caches that have seen no change (no pods,
	// no Events) are at version 0, as the handler is.
	return &handler{f: f, streams: make(chan struct{}, MaxStreams), views: map[string]*encoded{},
		run: base64.RawURLEncoding.EncodeToString(nonce[:])}
}

// MaxStreams is how many pages may follow the fleet at once (503 beyond):
// each holds a connection, and each change makes each read the view.
const MaxStreams = 64

type handler struct {
	f       *Fleet
	streams chan struct{} // a token per stream open

	// views are the answers of /api/fleet encoded at version at, by their
	// filter: at each change every open page asks at once, and one
	// encoding serves them all.
	mu    sync.Mutex
	at    uint64
	views map[string]*encoded
	// run tells this process's ETags from another's: the versions count
	// from 0 at each start, and a browser keeps an old answer's.
	run string
}

// encoded is one answer of /api/fleet, as JSON and gzipped.
type encoded struct {
	json, gzip []byte
	etag       string
}

// maxViews bounds the answers kept for one version: as many filters as
// pages may be open at once, and never more whatever clients ask.
const maxViews = MaxStreams

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	webpage.SetHeaders(w)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		wire.WriteError(w, http.StatusMethodNotAllowed, "method %s not allowed: the fleet's page only reads (use GET or HEAD)", r.Method)
		return
	}
	switch r.URL.Path {
	case "/api/fleet":
		h.serveView(w, r)
	case "/api/stream":
		h.serveStream(w, r)
	case "/":
		files.Serve(w, r, "index.html")
	case "/fleet/app.js", "/fleet/style.css":
		files.Serve(w, r, path.Base(r.URL.Path))
	default:
		http.NotFound(w, r)
	}
}

// ParseFilter reads a Filter from the query's namespace, selector and
// status: an error naming the parameter.
func ParseFilter(namespace, selector, status string) (Filter, error) {
	f := Filter{Namespace: namespace, Status: status}
	if selector != "" {
		sel, err := labels.Parse(selector)
		if err != nil {
			return Filter{}, fmt.Errorf("selector %q: %w", selector, err)
		}
		f.Labels = sel
	}
	if status != "" && !slices.Contains([]string{StatusPassing, StatusFailing, StatusUnknown, NotReady}, status) {
		return Filter{}, fmt.Errorf("status %q: use %s, %s, %s or %s", status, StatusPassing, StatusFailing, StatusUnknown, NotReady)
	}
	return f, nil
}

func (h *handler) serveView(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	filter, err := ParseFilter(q.Get("namespace"), q.Get("selector"), q.Get("status"))
	if err != nil {
		wire.WriteError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if !h.f.Synced() {
		// Half a list would say pods are missing that are not: the page
		// asks again at the stream's next change.
		w.Header().Set("Cache-Control", "no-store")
		wire.WriteError(w, http.StatusServiceUnavailable, "the pods and their Events are not listed yet")
		return
	}
	e := h.view(filter, q.Get("namespace")+"\x00"+q.Get("selector")+"\x00"+q.Get("status"))
	hd := w.Header()
	// Kept by the browser, and asked again each time: an unchanged view is
	// a 304. Private: it may quote the Events' messages.
	hd.Set("Cache-Control", "no-cache, private")
	hd.Set("ETag", e.etag)
	hd.Set("Vary", "Accept-Encoding")
	if slices.Contains(r.Header.Values("If-None-Match"), e.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", "application/json")
	body := e.json
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		hd.Set("Content-Encoding", "gzip")
		body = e.gzip
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// view is the answer for filter (its query spelled key), encoded once for
// the version of the caches.
func (h *handler) view(filter Filter, key string) *encoded {
	rows, version := h.f.RowsAt()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.at != version || len(h.views) >= maxViews {
		h.at, h.views = version, map[string]*encoded{}
	}
	if e := h.views[key]; e != nil {
		return e
	}
	b, err := json.Marshal(Select(rows, filter))
	if err != nil { // a View is plain data: never
		panic(fmt.Sprintf("fleet: the view has no JSON: %v", err))
	}
	b = append(b, '\n')
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed) // a valid level: no error
	zw.Write(b)
	zw.Close()
	sum := sha256.Sum256([]byte(key))
	e := &encoded{json: b, gzip: gz.Bytes(), etag: fmt.Sprintf(`"%s-%d-%s"`, h.run, version, base64.RawURLEncoding.EncodeToString(sum[:6]))}
	h.views[key] = e
	return e
}

func (h *handler) serveStream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	flusher, ok := w.(http.Flusher)
	if !ok {
		wire.WriteError(w, http.StatusInternalServerError, "this connection cannot stream")
		return
	}
	select {
	case h.streams <- struct{}{}:
		defer func() { <-h.streams }()
	default:
		w.Header().Set("Retry-After", "5")
		wire.WriteError(w, http.StatusServiceUnavailable, "too many pages follow the fleet (%d): try again later", MaxStreams)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	keepalive := time.NewTicker(wire.Keepalive)
	defer keepalive.Stop()
	for {
		changed, v := h.f.Changed()
		if _, err := fmt.Fprintf(w, "event: change\ndata: {\"version\":%d}\n\n", v); err != nil {
			return
		}
		flusher.Flush()
		if !waitChange(w, flusher, r, changed, keepalive.C) {
			return
		}
	}
}

// waitChange waits for changed, writing a comment line at each keepalive
// tick; false when the page has gone.
func waitChange(w http.ResponseWriter, flusher http.Flusher, r *http.Request, changed <-chan struct{}, keepalive <-chan time.Time) bool {
	for {
		select {
		case <-changed:
			return true
		case <-keepalive:
			if _, err := fmt.Fprint(w, ": keepalive\n\n"); err != nil {
				return false
			}
			flusher.Flush()
		case <-r.Context().Done():
			return false
		}
	}
}

// The page's files, embedded: plain HTML, CSS and JavaScript, with no build
// step and nothing loaded from elsewhere.
//
//go:embed assets
var assetFS embed.FS

// files are the page's, served as the agent's status page serves its own.
var files = webpage.NewFiles(assetFS, "assets")

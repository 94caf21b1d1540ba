package fleet

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
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
	return &handler{f: f, streams: make(chan struct{}, MaxStreams), views: map[string]*webpage.JSON{},
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
	views map[string]*webpage.JSON
	// run tells this process's ETags from another's: the versions count
	// from 0 at each start, and a browser keeps an old answer's.
	run string
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
	// Kept by the browser, and asked again each time: an unchanged view is
	// a 304. Private: it may quote the Events' messages.
	w.Header().Set("Cache-Control", "no-cache, private")
	h.view(filter, q.Get("namespace")+"\x00"+q.Get("selector")+"\x00"+q.Get("status")).Serve(w, r)
}

// view is the answer for filter (the query that spelled it), encoded once
// for the version of the caches.
func (h *handler) view(filter Filter, query string) *webpage.JSON {
	rows, version := h.f.RowsAt()
	h.mu.Lock()
	if version < h.at {
		// Read before another request's newer rows were kept: answered,
		// not kept, and made without holding up the others.
		h.mu.Unlock()
		return h.encode(rows, version, filter, query)
	}
	defer h.mu.Unlock()
	if h.at != version || len(h.views) >= maxViews {
		h.at, h.views = version, map[string]*webpage.JSON{}
	}
	if e := h.views[query]; e != nil {
		return e
	}
	e := h.encode(rows, version, filter, query)
	h.views[query] = e
	return e
}

// encode is the answer of the rows of version for filter.
func (h *handler) encode(rows []Row, version uint64, filter Filter, query string) *webpage.JSON {
	sum := sha256.Sum256([]byte(query))
	etag := fmt.Sprintf(`"%s-%d-%s"`, h.run, version, base64.RawURLEncoding.EncodeToString(sum[:6]))
	view := Select(rows, filter)
	e, err := webpage.WriteJSON(etag, func(w io.Writer) error { return writeView(w, view) })
	if err != nil { // a View is plain data: never
		panic(fmt.Sprintf("fleet: the view has no JSON: %v", err))
	}
	return e
}

// writeView writes v as json.Marshal does, and a newline, a row at a
// time: the whole JSON never is in memory at once. The view without its
// rows gives the JSON around them, so that each field is spelled once, in
// View's tags.
func writeView(w io.Writer, v View) error {
	around, err := json.Marshal(View{Summary: v.Summary, Rows: []Row{}})
	if err != nil {
		return err
	}
	head, ok := bytes.CutSuffix(around, []byte("]}"))
	if !ok { // the rows are View's last field: never
		return fmt.Errorf("fleet: a view without rows ends in %q, not in its rows", around[max(len(around)-8, 0):])
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	for i, r := range v.Rows {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := w.Write([]byte{','}); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	_, err = w.Write([]byte("]}\n"))
	return err
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

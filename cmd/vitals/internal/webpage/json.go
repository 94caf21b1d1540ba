package webpage

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// JSON is one version of an answer of a page's API, made once for every
// page that reads it (each open page asks again at each change): its body,
// plain and gzipped, with a strong ETag for each encoding. Make one with
// NewJSON or WriteJSON.
type JSON struct {
	etag  string        // the plain body's; the gzipped one's ends in -gzip
	size  int           // the plain body's length
	plain []byte        // the plain body; nil when it is kept gzipped only
	gzip  func() []byte // the gzipped body
}

// NewJSON is body, of the version that etag (a quoted strong ETag) names,
// gzipped once, at the first request that takes gzip: an answer small
// enough to keep plain.
func NewJSON(etag string, body []byte) *JSON {
	return &JSON{etag: etag, size: len(body), plain: body,
		gzip: sync.OnceValue(func() []byte {
			var b bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&b, gzip.DefaultCompression) // a valid level: no error
			zw.Write(body)
			zw.Close()
			return b.Bytes()
		})}
}

// WriteJSON is what write writes, of the version that etag names, kept
// gzipped only, as it is written: an answer too large to hold plain (the
// fleet's is 12 MB at 5,000 pods, its gzip 0.8 MB), which is then
// never whole in memory. The rare client that takes no gzip gets it
// inflated as it is sent. An error is write's.
func WriteJSON(etag string, write func(io.Writer) error) (*JSON, error) {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed) // a valid level: no error
	cw := &counter{w: zw}
	if err := write(cw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil { // into a bytes.Buffer: never
		return nil, err
	}
	gz := b.Bytes()
	return &JSON{etag: etag, size: cw.n, gzip: func() []byte { return gz }}, nil
}

// counter counts the bytes written through it.
type counter struct {
	w io.Writer
	n int
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// Serve answers r with j: 304 when its If-None-Match names the ETag of the
// encoding r takes, else the body in that encoding (gzip when
// Accept-Encoding allows it). The caller says how it may be cached
// (Cache-Control).
func (j *JSON) Serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Vary", "Accept-Encoding")
	gzipped := acceptsGzip(strings.Join(r.Header.Values("Accept-Encoding"), ","))
	etag := j.etag
	if gzipped {
		// Another encoding, another strong ETag of the same version: a
		// cache revalidates the encoding it holds, and only that one.
		etag = strings.TrimSuffix(j.etag, `"`) + `-gzip"`
	}
	h.Set("ETag", etag)
	if matchesETag(strings.Join(r.Header.Values("If-None-Match"), ","), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if gzipped {
		body := j.gzip()
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(body)
		}
		return
	}
	h.Set("Content-Length", strconv.Itoa(j.size))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if j.plain != nil {
		w.Write(j.plain)
		return
	}
	zr, err := gzip.NewReader(bytes.NewReader(j.gzip()))
	if err != nil { // WriteJSON wrote it: never
		panic(fmt.Sprintf("webpage: the answer's gzip: %v", err))
	}
	io.Copy(w, zr) // an error is the client's going: nothing to tell it
}

// acceptsGzip reports whether an Accept-Encoding allows gzip: named
// (gzip or x-gzip) with a q above 0, or, when it is not named, * with a q
// above 0 (RFC 9110: a coding named says more than *). A q that is not a
// number from 0 to 1 reads as 0: the plain body is always safe.
func acceptsGzip(accept string) bool {
	named, star := -1.0, -1.0 // the q of each, -1 when absent
	for part := range strings.SplitSeq(accept, ",") {
		name, params, _ := strings.Cut(part, ";")
		q := 1.0
		for param := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(param, "=")
			if !strings.EqualFold(strings.Trim(k, " \t"), "q") {
				continue
			}
			f, err := strconv.ParseFloat(strings.Trim(v, " \t"), 64)
			if err != nil || !(f >= 0 && f <= 1) {
				f = 0
			}
			q = f
		}
		switch strings.ToLower(strings.Trim(name, " \t")) {
		case "gzip", "x-gzip":
			named = max(named, q)
		case "*":
			star = max(star, q)
		}
	}
	if named >= 0 {
		return named > 0
	}
	return star > 0
}

// matchesETag reports whether an If-None-Match names etag: weakly, as
// RFC 9110 compares for it.
func matchesETag(ifNoneMatch, etag string) bool {
	for tag := range strings.SplitSeq(ifNoneMatch, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == etag {
			return true
		}
	}
	return false
}

// Package webpage is what vitals's read-only pages share — the agent's
// status page (package ui) and the fleet's (package fleet): the headers on
// each of their answers, the serving of their embedded files, and their
// API's JSON answers, made once per version for every page that reads them
// (JSON: gzipped, with an ETag per encoding, 304 when unchanged). It sits
// below both, and imports nothing of vitals.
package webpage

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"sync"
	"time"
)

// SecurityHeaders are on every answer of a page. The policy allows this
// origin's script, style, images and requests, and nothing else: no inline
// script or style, no frame, no form, no plugin; nothing of it is read by
// another origin's page.
var SecurityHeaders = http.Header{
	"Content-Security-Policy": {"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
		"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
	"X-Content-Type-Options":       {"nosniff"},
	"Referrer-Policy":              {"no-referrer"},
	"X-Frame-Options":              {"DENY"},
	"Cross-Origin-Resource-Policy": {"same-origin"},
}

// SetHeaders puts SecurityHeaders on w's answer.
func SetHeaders(w http.ResponseWriter) {
	h := w.Header()
	for k, v := range SecurityHeaders {
		h[k] = v
	}
}

// types are the files' types: Go's own for these extensions, which the
// image (with no MIME database) serves. Named here, rather than asked of
// mime.TypeByExtension, because that loads the system's MIME database, some
// 450 KB of heap for the life of the process, which every garbage
// collection then marks, for a few files; and because, on a host with only
// /etc/mime.types, that file would override them.
var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// Files are a page's embedded files, read at the first request for one
// rather than when vitals starts: every process that links the page
// (vitals probe, vitals version too) would pay for them at start.
type Files struct {
	load func() map[string]file
}

// file is one embedded file, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// NewFiles are the files under dir of fsys (an embed.FS), by their names
// below dir. A file whose extension has no type is a build's mistake: the
// first request panics, saying which.
func NewFiles(fsys fs.FS, dir string) *Files {
	return &Files{load: sync.OnceValue(func() map[string]file {
		out := map[string]file{}
		err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			body, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			typ, ok := types[path.Ext(p)]
			if !ok {
				return fmt.Errorf("%s: no type for its extension", p)
			}
			// An ETag of the content: a browser revalidates a file in one
			// short answer (304), and never uses an old one after vitals
			// is upgraded.
			sum := sha256.Sum256(body)
			out[p[len(dir)+1:]] = file{body: body, contentType: typ, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
			return nil
		})
		if err != nil {
			panic(fmt.Sprintf("webpage: read the embedded files: %v", err)) // embedded at build time
		}
		return out
	})}
}

// Has says whether there is a file of that name.
func (f *Files) Has(name string) bool {
	_, ok := f.load()[name]
	return ok
}

// Serve answers with the file of that name (Has), revalidated at each use
// (no-cache, with its ETag).
func (f *Files) Serve(w http.ResponseWriter, r *http.Request, name string) {
	a := f.load()[name]
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
}

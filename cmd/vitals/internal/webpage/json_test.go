package webpage

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// Both kinds of JSON answer alike: the body in the encoding asked for, its
// length, a strong ETag of each encoding, and 304 for the one a client
// holds.
func TestAJSONAnswersInTheEncodingAskedAndRevalidates(t *testing.T) {
	body := bytes.Repeat([]byte(`{"name":"web","status":"passing"},`), 1000)
	written, err := WriteJSON(`"v7"`, func(w io.Writer) error {
		for i := 0; i < len(body); i += 100 { // in pieces, as a view is written
			if _, err := w.Write(body[i:min(i+100, len(body))]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, j := range map[string]*JSON{"NewJSON": NewJSON(`"v7"`, body), "WriteJSON": written} {
		for _, tc := range []struct {
			method, accept, ifNoneMatch string
			status                      int
			etag, encoding              string
		}{
			{"GET", "", "", 200, `"v7"`, ""},
			{"GET", "gzip, deflate, br", "", 200, `"v7-gzip"`, "gzip"},
			{"GET", "br;q=1, gzip;q=0", "", 200, `"v7"`, ""},
			{"GET", "*", "", 200, `"v7-gzip"`, "gzip"},
			{"GET", "gzip;q=0, *", "", 200, `"v7"`, ""}, // named, gzip says more than *
			{"GET", "*;q=0", "", 200, `"v7"`, ""},
			{"GET", "identity, x-gzip;q=0.5", "", 200, `"v7-gzip"`, "gzip"},
			{"GET", "gzip;Q=0, *", "", 200, `"v7"`, ""},
			{"GET", "gzip;level=1;\tq=0", "", 200, `"v7"`, ""},
			{"GET", "gzip;q=abc", "", 200, `"v7"`, ""},
			{"GET", "gzip;q=-1, *", "", 200, `"v7"`, ""},
			{"HEAD", "", "", 200, `"v7"`, ""},
			{"HEAD", "gzip", "", 200, `"v7-gzip"`, "gzip"},
			{"GET", "gzip", `"v6-gzip", W/"v7-gzip"`, 304, `"v7-gzip"`, ""},
			{"GET", "gzip", `"v7"`, 200, `"v7-gzip"`, "gzip"}, // the plain body's ETag: not the gzipped one's
			{"GET", "", `"v7"`, 304, `"v7"`, ""},
			{"GET", "", `*`, 304, `"v7"`, ""},
		} {
			r := httptest.NewRequest(tc.method, "/api", nil)
			if tc.accept != "" {
				r.Header.Set("Accept-Encoding", tc.accept)
			}
			if tc.ifNoneMatch != "" {
				r.Header.Set("If-None-Match", tc.ifNoneMatch)
			}
			w := httptest.NewRecorder()
			j.Serve(w, r)
			res := w.Result()
			what := name + " " + tc.method + " Accept-Encoding: " + tc.accept + ", If-None-Match: " + tc.ifNoneMatch
			if res.StatusCode != tc.status || res.Header.Get("ETag") != tc.etag || res.Header.Get("Content-Encoding") != tc.encoding ||
				res.Header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("%s: %s, ETag %s, Content-Encoding %q, Vary %q; want %d, %s, %q", what, res.Status, res.Header.Get("ETag"),
					res.Header.Get("Content-Encoding"), res.Header.Get("Vary"), tc.status, tc.etag, tc.encoding)
				continue
			}
			got := w.Body.Bytes()
			if tc.status != http.StatusOK {
				if len(got) != 0 {
					t.Errorf("%s: %d bytes with a %d", what, len(got), tc.status)
				}
				continue
			}
			n, _ := strconv.Atoi(res.Header.Get("Content-Length"))
			if tc.method == "HEAD" {
				// The length of what a GET of the same encoding sends.
				get := httptest.NewRequest("GET", "/api", nil)
				get.Header = r.Header
				gw := httptest.NewRecorder()
				j.Serve(gw, get)
				if len(got) != 0 || n != gw.Body.Len() {
					t.Errorf("%s: a body of %d bytes, Content-Length %d; a GET sends %d", what, len(got), n, gw.Body.Len())
				}
				continue
			}
			if n != len(got) {
				t.Errorf("%s: Content-Length %d of a body of %d", what, n, len(got))
			}
			if tc.encoding == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(got))
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if got, err = io.ReadAll(zr); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
			if !bytes.Equal(got, body) {
				t.Errorf("%s: %d bytes, not the body's %d", what, len(got), len(body))
			}
		}
	}
}

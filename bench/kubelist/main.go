// Command kubelist is P8's baseline: the cheapest program that does vitals
// fleet's work against the API server. It lists a namespace's pods, and the
// Events on them from the component vitals (the field selector vitals
// fleet's informer sends), both at once, each in one answer, as protobuf
// (what the API server keeps them in, and its cheapest encoding) over
// plain net/http, and counts the items by walking the wire format
// (protowire) without decoding them; says so on a line; then follows the
// pods' watch from the list's version, a line per change. It keeps nothing
// and builds no view.
//
//	kubelist -server https://127.0.0.1:PORT -token-file FILE -n NS
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

func main() {
	server := flag.String("server", "", "the API server's URL")
	tokenFile := flag.String("token-file", "", "a file holding a bearer token")
	ns := flag.String("n", "", "the namespace")
	flag.Parse()
	token, err := os.ReadFile(*tokenFile)
	if err != nil {
		fail(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // a loopback test server
	get := func(path, accept string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, *server+path, nil)
		if err != nil {
			fail(err)
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		req.Header.Set("Accept", accept)
		res, err := client.Do(req)
		if err != nil {
			fail(err)
		}
		if res.StatusCode != http.StatusOK {
			fail(fmt.Errorf("GET %s: %s", path, res.Status))
		}
		return res
	}
	count := func(path string) (int, string) {
		res := get(path, protobuf)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			fail(err)
		}
		n, version, err := countItems(body)
		if err != nil {
			fail(fmt.Errorf("GET %s: %w", path, err))
		}
		return n, version
	}
	base := "/api/v1/namespaces/" + *ns
	type listed struct {
		n       int
		version string
	}
	pods, events := make(chan listed), make(chan listed)
	go func() { n, v := count(base + "/pods"); pods <- listed{n, v} }()
	go func() {
		n, v := count(base + "/events?fieldSelector=" + url.QueryEscape("involvedObject.kind=Pod,source=vitals"))
		events <- listed{n, v}
	}()
	p, e := <-pods, <-events
	fmt.Printf("listed %d pods %d events\n", p.n, e.n)
	version := p.version
	res := get(base+"/pods?watch=1&resourceVersion="+version, "application/json")
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fmt.Println("changed")
	}
}

// protobuf is the API server's protobuf media type: a body is "k8s\x00" and
// a runtime.Unknown, whose raw bytes (field 2) are the list: its ListMeta
// (field 1, the version in its field 2) and its items (field 2, each a
// message).
const protobuf = "application/vnd.kubernetes.protobuf"

// countItems counts a protobuf list's items and reads its resourceVersion.
func countItems(body []byte) (int, string, error) {
	raw, ok := bytes.CutPrefix(body, []byte("k8s\x00"))
	if !ok {
		return 0, "", fmt.Errorf("not protobuf: %.20q", body)
	}
	list, err := field(raw, 2)
	if err != nil {
		return 0, "", fmt.Errorf("the envelope: %w", err)
	}
	n, version := 0, ""
	for b := list; len(b) > 0; {
		num, typ, m := protowire.ConsumeTag(b)
		if m < 0 {
			return 0, "", protowire.ParseError(m)
		}
		b = b[m:]
		if num == 1 && typ == protowire.BytesType {
			meta, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return 0, "", protowire.ParseError(m)
			}
			v, err := field(meta, 2)
			if err != nil {
				return 0, "", fmt.Errorf("the list's metadata: %w", err)
			}
			version = string(v)
		} else if num == 2 {
			n++
		}
		m = protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return 0, "", protowire.ParseError(m)
		}
		b = b[m:]
	}
	return n, version, nil
}

// field is the bytes of the first field num of message b.
func field(b []byte, num protowire.Number) ([]byte, error) {
	for len(b) > 0 {
		n, typ, m := protowire.ConsumeTag(b)
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		b = b[m:]
		if n == num && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, protowire.ParseError(m)
			}
			return v, nil
		}
		m = protowire.ConsumeFieldValue(n, typ, b)
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		b = b[m:]
	}
	return nil, fmt.Errorf("no field %d", num)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kubelist:", err)
	os.Exit(1)
}

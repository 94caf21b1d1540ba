// Command kubelist is P8's baseline: the cheapest program that does vitals
// fleet's work against the API server. It lists a namespace's pods, and the
// Events on them from the component vitals (the field selector vitals
// fleet's informer sends), once each, as JSON over plain net/http, decoding
// only their names; says so on a line; then follows the pods' watch from
// the list's version, a line per change. It keeps nothing and builds no
// view.
//
//	kubelist -server https://127.0.0.1:PORT -token-file FILE -n NS
package main

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
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
	get := func(path string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, *server+path, nil)
		if err != nil {
			fail(err)
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		res, err := client.Do(req)
		if err != nil {
			fail(err)
		}
		if res.StatusCode != http.StatusOK {
			fail(fmt.Errorf("GET %s: %s", path, res.Status))
		}
		return res
	}
	var list struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
		Items    []struct {
			Metadata struct{ Name string } `json:"metadata"`
		} `json:"items"`
	}
	count := func(path string) (int, string) {
		res := get(path)
		defer res.Body.Close()
		list.Items = nil
		if err := json.NewDecoder(res.Body).Decode(&list); err != nil {
			fail(err)
		}
		return len(list.Items), list.Metadata.ResourceVersion
	}
	base := "/api/v1/namespaces/" + *ns
	pods, version := count(base + "/pods")
	events, _ := count(base + "/events?fieldSelector=" + url.QueryEscape("involvedObject.kind=Pod,source=vitals"))
	fmt.Printf("listed %d pods %d events\n", pods, events)
	res := get(base + "/pods?watch=1&resourceVersion=" + version)
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fmt.Println("changed")
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kubelist:", err)
	os.Exit(1)
}

// Command authservice stands in for the OIDC authservice of the Kubeflow
// story: an HTTP server in front of an identity provider. While its provider
// setup fails it logs so and answers 503; once set up it answers 302 to the
// login page. When the provider goes away (here: the file $BREAK_FILE
// appears) it logs the failure and answers 503 for good — it never retries,
// which is the bug — until it is restarted.
//
//	LISTEN      where to serve (default 127.0.0.1:8080)
//	SETUP_TIME  how long the provider setup fails at start (default 2s)
//	BREAK_FILE  a file whose appearance breaks the running instance
package main

import (
	"cmp"
	"log"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

func main() {
	log.SetFlags(0)
	log.SetOutput(os.Stdout)
	addr := cmp.Or(os.Getenv("LISTEN"), "127.0.0.1:8080")
	setup, err := time.ParseDuration(cmp.Or(os.Getenv("SETUP_TIME"), "2s"))
	if err != nil {
		log.Fatalf("SETUP_TIME: %v", err)
	}
	breakFile := os.Getenv("BREAK_FILE")

	var ready, broken atomic.Bool
	go func() {
		for deadline := time.Now().Add(setup); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			log.Print("OIDC provider setup failed: dial tcp dex:5556: connection refused; retrying")
		}
		log.Print("OIDC provider ready")
		ready.Store(true)
		for breakFile != "" {
			if _, err := os.Stat(breakFile); err == nil {
				os.Remove(breakFile) // the provider is back for the next instance
				broken.Store(true)
				log.Print("OIDC provider setup failed: token endpoint gone; serving 503 until restarted")
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()

	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if !ready.Load() || broken.Load() {
			http.Error(w, "OIDC provider setup failed", http.StatusServiceUnavailable)
			return
		}
		http.Redirect(w, r, "/dex/auth", http.StatusFound)
	})
	http.HandleFunc("/dex/auth", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("login page\n"))
	})
	log.Printf("Listening on %s", addr)
	log.Fatal(http.ListenAndServe(addr, nil))
}

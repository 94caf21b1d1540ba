// Package serve is what the servers under bench/servers share: their flags
// and the HTTP server, so that each server's main holds only its handler and
// every one of them is served the same way.
package serve

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

var (
	addr   = flag.String("addr", "127.0.0.1:8080", "the loopback address to serve on")
	checks = flag.Int("checks", 50, "how many checks to register")
)

// Checks parses the flags and returns how many checks to register.
func Checks() int {
	flag.Parse()
	return *checks
}

// CheckName is the name of the i-th check, the same in every server.
func CheckName(i int) string { return fmt.Sprintf("check-%02d", i) }

// Run serves h on -addr until the process is killed (bench stops servers
// with SIGTERM, whose default action is enough here).
func Run(h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	Exit(srv.Serve(Listen()))
}

// Listen listens on -addr, or exits saying why.
func Listen() net.Listener {
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		Exit(err)
	}
	return ln
}

// Exit writes why the server stopped serving and exits 1: a server serves
// until bench kills it.
func Exit(why error) {
	fmt.Fprintln(os.Stderr, why)
	os.Exit(1)
}

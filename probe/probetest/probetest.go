// Package probetest has what tests of check kinds need beside a real
// server: servers that misbehave as real ones do, and a certificate
// authority for TLS tests.
package probetest

import (
	"net"
	"sync"
	"testing"
)

// SilentListener accepts TCP connections on loopback and never writes to
// them, holding each open until the test ends: a server that hangs, which a
// check must give up on at its timeout.
func SilentListener(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, unanswered, until the test ends
			mu.Unlock()
		}
	}()
	return ln
}

package client

import (
	"strings"
	"testing"
)

// An address is a unix socket's path, tcp://HOST:PORT as the agent's api:
// says it, or an http(s) URL, which may have a path the API is under.
func TestNewTakesASocketTCPOrAnHTTPURL(t *testing.T) {
	for _, tc := range []struct {
		addr, base, err string
	}{
		{"/run/vitals/vitals.sock", "http://vitals", ""},
		{"vitals.sock", "http://vitals", ""},
		{"tcp://10.0.0.7:8559", "http://10.0.0.7:8559", ""},
		{"tcp://[::1]:8559", "http://[::1]:8559", ""},
		{"http://10.0.0.7:8559", "http://10.0.0.7:8559", ""},
		{"http://10.0.0.7:8559/", "http://10.0.0.7:8559", ""},
		{"https://ops.example.com/vitals/pod-7/", "https://ops.example.com/vitals/pod-7", ""},
		{"", "", `API address "": want a unix socket's path, tcp://HOST:PORT or an http:// URL`},
		{"tcp://localhost", "", `API address "tcp://localhost": want tcp://HOST:PORT: address localhost: missing port in address`},
		{"unix:///run/vitals.sock", "", `API address "unix:///run/vitals.sock": want a unix socket's path`},
		{"http://", "", `API address "http://": want an http:// or https:// URL with a host, and no query`},
		{"http://host:1/?x=1", "", "with a host, and no query"},
	} {
		c, err := New(tc.addr, "")
		switch {
		case tc.err == "" && (err != nil || c.base != tc.base):
			t.Errorf("New(%q): %v, base %q; want %q", tc.addr, err, c.base, tc.base)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("New(%q): %v, want %q", tc.addr, err, tc.err)
		}
	}
}

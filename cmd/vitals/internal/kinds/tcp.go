package kinds

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// TCP is a connection that must open, with an optional exchange.
var TCP = define(Kind{
	Name:          "tcp",
	Summary:       "A TCP connection that opens, with an optional exchange: send, then expect in the answer.",
	Example:       "{address: localhost:5432}",
	ComponentType: health.ComponentTypeComponent, // the workload's own port, most often
	CLI:           tcpCLI,
	Import:        &Import{Kubelet: "tcpSocket", Pebble: "tcp", Block: tcpFromPeer},
}, block[probe.TCPSpec]{
	fields: func(s *probe.TCPSpec) []config.Field {
		return []config.Field{
			{Key: "address", Value: config.String(&s.Address), Required: true,
				Doc: "Required: HOST:PORT, the port a number; an empty host, as in :6379, is this machine."},
			{Key: "send", Value: config.String(&s.Send),
				Doc: "Written once connected; outputs give its length only, as it may hold a password. By default nothing is sent, and the connection is closed at once, as the kubelet does."},
			{Key: "expect", Value: config.String(&s.Expect),
				Doc: "Must appear in what the server sends back within its first 10 KiB: an answer to send, or a banner (SSH, SMTP)."},
		}
	},
	build: func(_ string, s probe.TCPSpec, _ Env) (health.Checker, error) { return probe.TCP(s) },
})

// tcpFromPeer is the block of a peer's TCP check, which opens a connection
// and closes it: its address, which the checker must take.
func tcpFromPeer(p Peer) ([]Pair, error) {
	if _, err := probe.TCP(probe.TCPSpec{Address: p.Address}); err != nil {
		return nil, err
	}
	return []Pair{{Key: "address", Value: p.Address}}, nil
}

var tcpCLI = takes(CLI{
	Schemes: []string{"tcp"}, Target: "tcp://HOST:PORT",
	Help: "a TCP connect, optionally --send/--expect", Example: "tcp://localhost:5432",
}, targets[probe.TCPSpec]{
	flags: func(s *probe.TCPSpec) []Flag {
		return []Flag{
			{Name: "send", Value: stringFlag(&s.Send), Usage: `bytes to send after connecting (escapes \r \n \t \\ \xHH)`},
			{Name: "expect", Value: stringFlag(&s.Expect), Usage: "text the answer must contain (same escapes)"},
		}
	},
	url: func(target string, s probe.TCPSpec) (*probe.Prober, error) {
		var err error
		if s.Address, err = hostPort(target); err != nil {
			return nil, err
		}
		if s.Send, err = unescape("--send", s.Send); err != nil {
			return nil, err
		}
		if s.Expect, err = unescape("--expect", s.Expect); err != nil {
			return nil, err
		}
		return probe.TCP(s)
	},
})

// unescape reads \r, \n, \t, \\ and \xHH in s, so that a protocol's bytes can
// be typed on a command line: --send 'PING\r\n'.
func unescape(flag, s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	out, err := strconv.Unquote(`"` + strings.ReplaceAll(s, `"`, `\"`) + `"`)
	if err != nil {
		return "", fmt.Errorf(`%s %q: a bad escape: use \r, \n, \t, \\ or \xHH`, flag, s)
	}
	return out, nil
}

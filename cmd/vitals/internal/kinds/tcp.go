package kinds

import (
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// TCP is a connection that must open, with an optional exchange.
var TCP = define(Kind{
	Name:    "tcp",
	Summary: "A TCP connection that opens, with an optional exchange: send, then expect in the answer.",
	Example: "{address: localhost:5432}",
	CLI:     &CLI{Schemes: []string{"tcp"}, Target: "tcp://HOST:PORT"},
	Import:  &Import{Kubelet: "tcpSocket", Pebble: "tcp", Block: tcpFromPeer},
}, block[probe.TCPSpec]{
	fields: func(s *probe.TCPSpec) []config.Field {
		return []config.Field{
			{Key: "address", Value: config.String(&s.Address),
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

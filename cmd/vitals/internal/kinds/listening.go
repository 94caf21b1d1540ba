package kinds

import (
	"fmt"
	"net"
	"strconv"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/procnet"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// Listening is the workload's listening TCP socket on a port, read from
// /proc: it is there before the workload answers, and a check of it
// connects to nothing.
var Listening = define(Kind{
	Name:          "listening",
	Summary:       "The workload listens on a TCP port (and address), whether or not it answers yet; nothing connects to it.",
	Example:       "{port: 8080}",
	ComponentType: health.ComponentTypeComponent, // the workload's own port
	CLI:           listeningCLI,
	Rules:         processesRules,
}, block[procnet.ListeningSpec]{
	fields: func(s *procnet.ListeningSpec) []config.Field {
		return append([]config.Field{
			{Key: "port", Value: config.Whole(&s.Port, 1, 65535), Required: true, Doc: "Required: the port, from 1 to 65535."},
			{Key: "address", Value: config.String(&s.Address),
				Doc: "An IP address the socket must accept on: bound to it, or to every address (0.0.0.0 for an IPv4 address, :: for either). By default any: 0.0.0.0 asks that it accept from outside the pod, not only on 127.0.0.1."},
		}, processFields(&s.Processes)...)
	},
	check: func(d *config.Decoder, n ast.Node, path string, s *procnet.ListeningSpec, given config.Given) {
		placeErrors(d, n, path, given, s.Processes, s.Validate())
	},
	build: func(name string, s procnet.ListeningSpec, env Env) (health.Checker, error) {
		pid, err := workloadPID(name, s.Processes, env)
		if err != nil {
			return nil, err
		}
		return procnet.Listening(s, pid)
	},
})

var listeningCLI = takes(CLI{
	Schemes: []string{"listening"}, Target: "listening://[ADDRESS]:PORT",
	Help:    "a listening TCP socket on PORT (and ADDRESS), connecting to nothing; of --pid, --pid-file or --process, or of any process here",
	Example: "listening://:8558",
}, targets[procnet.ListeningSpec]{
	flags: func(s *procnet.ListeningSpec) []Flag { return processFlags(&s.Processes) },
	url: func(target string, s procnet.ListeningSpec) (*probe.Prober, error) {
		hp, err := hostPort(target)
		if err != nil {
			return nil, err
		}
		host, port, err := net.SplitHostPort(hp)
		if err != nil {
			return nil, fmt.Errorf("target %q: want listening://[ADDRESS]:PORT", target)
		}
		if s.Port, err = strconv.Atoi(port); err != nil || s.Port < 1 || s.Port > 65535 {
			return nil, fmt.Errorf("target %q: port %q is not a number from 1 to 65535", target, port)
		}
		if host != "" && host != "*" {
			s.Address = host
		}
		if s.Processes, err = processesOfFlags(s.Processes); err != nil {
			return nil, err
		}
		return procnet.Listening(s, nil)
	},
})

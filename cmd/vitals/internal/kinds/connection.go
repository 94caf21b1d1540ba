package kinds

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/procnet"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// Connection is the workload's established TCP connections to a remote:
// what ss and netstat show of it, read from /proc.
var Connection = define(Kind{
	Name:          "connection",
	Summary:       "The workload holds established TCP connections to a remote, as ss shows them: at least min, each held as long as for says.",
	Example:       "{remote: \"localhost:5672\"}",
	ComponentType: health.ComponentTypeComponent, // the workload's own connection, whatever the remote's health
	CLI:           connectionCLI,
	Rules:         processesRules,
}, block[procnet.ConnectionSpec]{
	fields: func(s *procnet.ConnectionSpec) []config.Field {
		return append([]config.Field{
			{Key: "remote", Value: config.String(&s.Remote), Required: true,
				Doc: "Required: HOST:PORT, the host resolved at each run (a connection to any of its addresses counts), or *:PORT for any host."},
			{Key: "min", Value: config.Count(&s.Min), Default: "1",
				Doc: "How many connections pass."},
			{Key: "for", Value: config.Duration(&s.For), Default: "0s",
				Doc: "How long each connection must have been held, from the run that first saw it (a connection made again starts over): a broker connection that flaps does not pass."},
		}, processFields(&s.Processes)...)
	},
	check: func(d *config.Decoder, n ast.Node, path string, s *procnet.ConnectionSpec, given config.Given) {
		if s.Min == 0 {
			s.Min = 1
		}
		placeErrors(d, n, path, given, s.Processes, s.Validate())
	},
	build: func(name string, s procnet.ConnectionSpec, env Env) (health.Checker, error) {
		pid, err := workloadPID(name, s.Processes, env)
		if err != nil {
			return nil, err
		}
		return procnet.Connection(s, pid, nil)
	},
})

var connectionCLI = takes(CLI{
	Schemes: []string{"connection"}, Target: "connection://HOST:PORT",
	Help:    "established TCP connections to HOST:PORT (*:PORT: any host), at least --min; of --pid, --pid-file or --process, or of any process here",
	Example: "connection://localhost:5672",
}, targets[procnet.ConnectionSpec]{
	flags: func(s *procnet.ConnectionSpec) []Flag {
		return append([]Flag{{Name: "min", Value: intFlag(&s.Min), Usage: "how many connections pass (default 1)"}},
			processFlags(&s.Processes)...)
	},
	url: func(target string, s procnet.ConnectionSpec) (*probe.Prober, error) {
		var err error
		if s.Remote, err = hostPort(target); err != nil {
			return nil, err
		}
		if _, _, err := procnet.ParseRemote(s.Remote); err != nil {
			return nil, fmt.Errorf("target %q: %w", target, err)
		}
		if s.Min < 0 {
			return nil, fmt.Errorf("--min %d: must be at least 1", s.Min)
		}
		if s.Processes, err = processesOfFlags(s.Processes); err != nil {
			return nil, err
		}
		return procnet.Connection(s, nil, nil)
	},
})

// ErrNoProcesses is the build of a connection or a listening check that
// names no processes, with no workload to look at (no Env.Workload): the
// agent says it at the check, where the file has it, when neither the file
// nor the command line gives a workload.
var ErrNoProcesses = errors.New("counts the sockets of the workload's processes, as it names no others (pid-file, process or any-process): " +
	"give service: in the file, or the command after --")

// processFields are the fields that name whose sockets a connection or a
// listening check counts, read into p.
func processFields(p *procnet.Processes) []config.Field {
	return []config.Field{
		{Key: "pid-file", Value: config.CString(&p.PIDFile),
			Doc: "Counts the sockets of the process whose pid this file holds (read at each run), and of those under it, in place of the workload's."},
		{Key: "process", Value: config.String(&p.Name),
			Doc: "Counts the sockets of every process of this name, and of those under them, in place of the workload's: its comm as ps shows it (a script's own name, cut to 15 characters) or argv[0]'s base name. For another container of the pod, with shareProcessNamespace: true."},
		{Key: "any-process", Value: config.Bool(&p.AnyProcess), Default: "false",
			Doc: "Counts every socket of vitals's network namespace, as ss shows them, but vitals's own (an amqp check's connection): in Kubernetes, those of every container of the pod, with no shared process namespace needed."},
	}
}

// processesRules say that a block names its processes once.
var processesRules = config.Schema{"not": config.Schema{"anyOf": []config.Schema{
	{"required": []string{"pid-file", "process"}},
	{"required": []string{"pid-file", "any-process"}},
	{"required": []string{"process", "any-process"}},
}}}

// placeErrors records the problems of a connection or a listening block,
// each *procnet.FieldError at its field; and an empty pid-file or process.
func placeErrors(d *config.Decoder, n ast.Node, path string, given config.Given, p procnet.Processes, err error) {
	for _, err := range unjoin(err) {
		var fe *procnet.FieldError
		if errors.As(err, &fe) && given[fe.Field] != nil {
			d.Errorf(given[fe.Field], path+"."+fe.Field, "%v", fe.Err)
		} else if err != nil {
			d.Errorf(n, path, "%v", err)
		}
	}
	// Given: any-process names processes, whatever its value, as the
	// schema says.
	if given["any-process"] != nil && !p.AnyProcess && (p.PIDFile != "" || p.Name != "") {
		named := "pid-file"
		if p.Name != "" {
			named = "process"
		}
		d.Errorf(given["any-process"], path+".any-process", "%s names the processes already: give one of the two", named)
	}
	if given["pid-file"] != nil && p.PIDFile == "" {
		d.Errorf(given["pid-file"], path+".pid-file", "empty: give the path of a file that holds a pid")
	}
	if given["process"] != nil && p.Name == "" {
		d.Errorf(given["process"], path+".process", "empty: give a process's name")
	}
}

// workloadPID is what gives a check named name the workload's pid, when
// its block names no processes: it registers with env.
func workloadPID(name string, p procnet.Processes, env Env) (func() int, error) {
	if !p.None() {
		return nil, nil
	}
	if env.Workload == nil {
		return nil, ErrNoProcesses
	}
	return env.Workload(name), nil
}

// processFlags are the flags that name whose sockets a connection:// or a
// listening:// target counts, read into p: by default, any process's.
func processFlags(p *procnet.Processes) []Flag {
	return []Flag{
		{Name: "pid", Value: intFlag(&p.PID), Usage: "count the sockets of this process and those under it, not any process's"},
		{Name: "pid-file", Value: stringFlag(&p.PIDFile), File: true, Usage: "count the sockets of the process whose pid this file holds, and those under it"},
		{Name: "process", Value: stringFlag(&p.Name), Usage: "count the sockets of the processes of this name (comm, or argv[0]'s base name), and those under them"},
	}
}

// processesOfFlags are the processes the flags name: any process's, as ss
// shows them, when they name none.
func processesOfFlags(p procnet.Processes) (procnet.Processes, error) {
	given := 0
	for _, named := range []bool{p.PID != 0, p.PIDFile != "", p.Name != ""} {
		if named {
			given++
		}
	}
	switch {
	case given > 1:
		return p, errors.New("--pid, --pid-file and --process each name the processes: give one")
	case p.PID < 0:
		return p, fmt.Errorf("--pid %d is not a pid", p.PID)
	case given == 0:
		p.AnyProcess = true
	}
	return p, nil
}

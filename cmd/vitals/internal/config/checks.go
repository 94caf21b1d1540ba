package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/redact"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/yamlnode"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// kind reads one kind's block of a check into its spec, and returns the spec
// and what builds its checker. The build is not called when the block had
// errors, which would only repeat them.
type kind func(d *decoder, n ast.Node, path string) (spec any, build func() (health.Checker, error))

// kinds is every kind a check may have: adding one is a line here and a
// function below.
var kinds = map[string]kind{
	"http": httpKind,
	"tcp":  tcpKind,
	"tls":  tlsKind,
	"exec": execKind,
	"file": fileKind,
	"dns":  dnsKind,
	"grpc": grpcKind,
	"log":  logKind,

	"postgres": urlKind(func(u string) deps.PostgresSpec { return deps.PostgresSpec{URL: u} }, deps.Postgres),
	"redis":    urlKind(func(u string) deps.RedisSpec { return deps.RedisSpec{URL: u} }, deps.Redis),
	"amqp":     urlKind(func(u string) deps.AMQPSpec { return deps.AMQPSpec{URL: u} }, deps.AMQP),
	"nats":     urlKind(func(u string) deps.NATSSpec { return deps.NATSSpec{URL: u} }, deps.NATS),
}

// heartbeatKind is the kind that runs nothing: the workload beats it.
const heartbeatKind = "heartbeat"

func kindNames() string {
	names := append(slices.Sorted(func(yield func(string) bool) {
		for k := range kinds {
			if !yield(k) {
				return
			}
		}
	}), heartbeatKind)
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// checks reads the checks mapping, in the file's order.
func (d *decoder) checks(n ast.Node) []Check {
	m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
	if !ok {
		d.errorf(n, "checks", "want a mapping of check names to checks, got %s", yamlnode.Describe(n))
		return nil
	}
	if len(m.Values) == 0 {
		d.errorf(n, "checks", "no checks: give at least one")
	}
	// A scratch Monitor validates each check as the real one will, so that a
	// file that loads is a file that starts.
	scratch := health.New(health.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	var out []Check
	for _, kv := range m.Values {
		name := yamlnode.KeyName(kv.Key)
		path := "checks." + name
		validName := health.ValidName(name)
		if !validName {
			d.errorf(kv.Key, path, "a check name is lower case letters, digits and - _ . inside, at most 63 characters")
		}
		c, at, ok := d.check(name, kv.Value, path) // its errors too, whatever its name
		if !ok || !validName {
			continue
		}
		var err error
		if c.Heartbeat > 0 {
			_, err = scratch.Heartbeat(name, c.Heartbeat, c.Level)
		} else {
			err = scratch.Add(c.Check)
		}
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), fmt.Sprintf("check %q: ", name))
			msg = strings.TrimSuffix(msg, ": "+health.ErrInvalidCheck.Error())
			switch {
			case strings.HasPrefix(msg, "timeout ") && at["timeout"] != nil:
				d.errorf(at["timeout"], path+".timeout", "%s", msg)
			case strings.HasPrefix(msg, "name "):
				d.errorf(kv.Key, path, "%s", msg)
			default:
				d.errorf(kv.Value, path, "%s", msg)
			}
			continue
		}
		// The file as vitals runs it: every default filled in.
		st, _ := scratch.CheckState(name)
		c.Period, c.Timeout, c.InitialDelay = st.Period, st.Timeout, st.InitialDelay
		c.SuccessThreshold, c.FailureThreshold = st.SuccessThreshold, st.FailureThreshold
		out = append(out, c)
	}
	return out
}

// check reads one check: its level and timing, and exactly one kind. at has
// the nodes of its timing fields, for errors found later.
func (d *decoder) check(name string, n ast.Node, path string) (c Check, at map[string]ast.Node, ok bool) {
	c = Check{Check: health.Check{Name: name, Level: health.Ready}, OnFailure: OnFailureIgnore}
	at = map[string]ast.Node{}
	before := len(d.errors)
	var level string
	var kindName string
	var kindNode, levelNode ast.Node
	noted := func(name string, f field) field {
		return func(d *decoder, n ast.Node, path string) {
			at[name] = n
			f(d, n, path)
		}
	}
	fields := map[string]field{
		"level": func(d *decoder, n ast.Node, path string) {
			levelNode = n
			str(&level)(d, n, path)
		},
		"period":            noted("period", duration(&c.Period)),
		"timeout":           noted("timeout", duration(&c.Timeout)),
		"initial-delay":     noted("initial-delay", duration(&c.InitialDelay)),
		"success-threshold": noted("success-threshold", count(&c.SuccessThreshold)),
		"failure-threshold": noted("failure-threshold", count(&c.FailureThreshold)),
		"on-failure": func(d *decoder, n ast.Node, path string) {
			if v, ok := d.scalar(n, path); ok {
				switch v {
				case OnFailureIgnore, OnFailureRestart, OnFailureExit:
					c.OnFailure = v
				default:
					d.errorf(n, path, "want restart, exit or ignore, got %q", v)
				}
			}
		},
	}
	for k := range kinds {
		fields[k] = d.kindField(k, &kindName, &kindNode)
	}
	fields[heartbeatKind] = d.kindField(heartbeatKind, &kindName, &kindNode)
	if !d.fields(n, path, fields) {
		return c, at, false
	}
	if level != "" {
		l, err := health.ParseLevel(level)
		if err != nil {
			d.errorf(levelNode, path+".level", "%v", err)
		}
		c.Level = l
	}
	if kindNode != nil {
		c.Source = flow(kindNode)
	}
	if c.Period > 0 && c.Period < MinPeriod && kindName != heartbeatKind {
		d.errorf(at["period"], path+".period", "%v is shorter than %v, the shortest period: more often is a busy loop, not a check", c.Period, MinPeriod)
	}
	switch {
	case kindName == "":
		d.errorf(n, path, "no kind: give one of %s", kindNames())
	case kindName == heartbeatKind:
		var ttl time.Duration
		mark := len(d.errors)
		d.fields(kindNode, path+"."+heartbeatKind, map[string]field{"ttl": duration(&ttl)})
		if ttl <= 0 && len(d.errors) == mark {
			d.errorf(kindNode, path+"."+heartbeatKind+".ttl", "required, and more than 0")
		}
		for _, f := range []struct {
			name string
			set  bool
		}{{"period", c.Period != 0}, {"timeout", c.Timeout != 0}, {"initial-delay", c.InitialDelay != 0},
			{"success-threshold", c.SuccessThreshold != 0}, {"failure-threshold", c.FailureThreshold != 0}} {
			if f.set {
				d.errorf(at[f.name], path+"."+f.name, "does not apply to a heartbeat: its ttl decides, the moment it passes")
			}
		}
		c.Heartbeat, c.Kind, c.Spec = ttl, heartbeatKind, map[string]any{"ttl": ttl.String()}
	default:
		mark := len(d.errors)
		spec, build := kinds[kindName](d, kindNode, path+"."+kindName)
		if len(d.errors) > mark {
			break
		}
		checker, err := build()
		if err != nil {
			d.errorf(kindNode, path+"."+kindName, "%s", strings.TrimPrefix(err.Error(), kindName+" probe: "))
		}
		c.Checker, c.Kind, c.Spec = checker, kindName, spec
	}
	return c, at, len(d.errors) == before
}

// flow writes a node on one line, as YAML's flow style.
func flow(n ast.Node) string {
	switch v := yamlnode.Unwrap(n).(type) {
	case *ast.MappingNode:
		v.SetIsFlowStyle(true)
	case *ast.SequenceNode:
		v.SetIsFlowStyle(true)
	}
	return strings.TrimSpace(n.String())
}

// kindField records which kind a check has, refusing a second one.
func (d *decoder) kindField(name string, kindName *string, kindNode *ast.Node) field {
	return func(d *decoder, n ast.Node, path string) {
		if *kindName != "" {
			d.errorf(n, path, "a check has one kind, and this one is %s already", *kindName)
			return
		}
		*kindName, *kindNode = name, n
	}
}

func httpKind(d *decoder, n ast.Node, path string) (any, func() (health.Checker, error)) {
	var s probe.HTTPSpec
	var header map[string][]string
	if !d.fields(n, path, map[string]field{
		"url": str(&s.URL), "method": str(&s.Method), "status": str(&s.Status),
		"headers": func(d *decoder, n ast.Node, path string) {
			stringMap(&header)(d, n, path)
			d.headers(n, path, header) // names, values, and the secrets they carry
		},
		"body": str(&s.Body), "not-body": str(&s.NotBody),
		"ca-file": cstr(&s.TLS.CAFile), "cert": cstr(&s.TLS.CertFile), "key": cstr(&s.TLS.KeyFile),
		"server-name": str(&s.TLS.ServerName), "insecure": boolean(&s.TLS.InsecureSkipVerify),
	}) {
		return nil, nil
	}
	s.Header = header
	return s, func() (health.Checker, error) {
		if s.URL == "" {
			return nil, errors.New("url is required")
		}
		return probe.HTTP(s)
	}
}

func tcpKind(d *decoder, n ast.Node, path string) (any, func() (health.Checker, error)) {
	var s probe.TCPSpec
	if !d.fields(n, path, map[string]field{"address": str(&s.Address), "send": str(&s.Send), "expect": str(&s.Expect)}) {
		return nil, nil
	}
	return s, func() (health.Checker, error) { return probe.TCP(s) }
}

func tlsKind(d *decoder, n ast.Node, path string) (any, func() (health.Checker, error)) {
	var s probe.TLSSpec
	if !d.fields(n, path, map[string]field{
		"address": str(&s.Address), "min-validity": duration(&s.MinValidity),
		"ca-file": cstr(&s.TLS.CAFile), "cert": cstr(&s.TLS.CertFile), "key": cstr(&s.TLS.KeyFile),
		"server-name": str(&s.TLS.ServerName), "insecure": boolean(&s.TLS.InsecureSkipVerify),
	}) {
		return nil, nil
	}
	return s, func() (health.Checker, error) { return probe.TLS(s) }
}

func execKind(d *decoder, n ast.Node, path string) (any, func() (health.Checker, error)) {
	var s probe.ExecSpec
	var env map[string][]string
	if !d.fields(n, path, map[string]field{"command": argv(&s.Command), "dir": cstr(&s.Dir),
		"env": func(d *decoder, n ast.Node, path string) {
			stringMap(&env)(d, n, path)
			d.envVars(n, path, env)
		},
	}) {
		return nil, nil
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range env {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, v := range env[k] {
			d.secrets = append(d.secrets, redact.Env(k, v)...)
			s.Env = append(s.Env, k+"="+v)
		}
	}
	return s, func() (health.Checker, error) { return probe.Exec(s) }
}

// argv reads a command as a list of words: there is no shell to split one.
func argv(dst *[]string) field {
	return func(d *decoder, n ast.Node, path string) {
		if _, ok := yamlnode.Unwrap(n).(*ast.SequenceNode); !ok {
			s, ok := d.scalar(n, path)
			if ok {
				d.errorf(n, path, "want a list of words, such as [%s], not %q: no shell splits it (for a shell, [sh, -c, \"…\"])",
					strings.Join(strings.Fields(s), ", "), s)
			}
			return
		}
		cstrs(dst)(d, n, path)
	}
}

// envVars checks an env mapping read into env: each name a variable's name
// (no = in it), as a service's env wants, and no value with a NUL byte,
// which no environment can hold. What is wrong is left out of env.
func (d *decoder) envVars(n ast.Node, path string, env map[string][]string) {
	m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
	if !ok {
		return // stringMap said so
	}
	for _, kv := range m.Values {
		key := yamlnode.KeyName(kv.Key)
		switch {
		case !validVar(key):
			d.errorf(kv.Key, join(path, key), "%q is not a variable name", key)
			delete(env, key)
		case slices.ContainsFunc(env[key], func(v string) bool { return strings.IndexByte(v, 0) >= 0 }):
			d.errorf(kv.Value, join(path, key), "has a NUL byte, which no environment can hold")
			delete(env, key)
		}
	}
}

func fileKind(d *decoder, n ast.Node, path string) (any, func() (health.Checker, error)) {
	var s probe.FileSpec
	if !d.fields(n, path, map[string]field{
		"path": cstr(&s.Path), "non-empty": boolean(&s.NonEmpty), "regular": boolean(&s.Regular),
		"max-age": duration(&s.MaxAge), "content": str(&s.Content),
	}) {
		return nil, nil
	}
	return s, func() (health.Checker, error) { return probe.File(s) }
}

func dnsKind(d *decoder, n ast.Node, path string) (any, func() (health.Checker, error)) {
	var s probe.DNSSpec
	if !d.fields(n, path, map[string]field{
		"name": str(&s.Name), "type": str(&s.Type), "answers": strs(&s.Expect), "server": str(&s.Server),
	}) {
		return nil, nil
	}
	s.Type = strings.ToUpper(s.Type)
	return s, func() (health.Checker, error) { return probe.DNS(s) }
}

// urlKind is a dependency kind whose block is one url: its spec is built
// from the url by spec, and its checker by build.
func urlKind[S any](spec func(url string) S, build func(S) (*probe.Prober, error)) kind {
	return func(d *decoder, n ast.Node, path string) (any, func() (health.Checker, error)) {
		var url string
		if !d.fields(n, path, map[string]field{"url": str(&url)}) {
			return nil, nil
		}
		s := spec(url)
		return s, func() (health.Checker, error) { return build(s) }
	}
}

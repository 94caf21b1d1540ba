// Package config reads vitals.yaml into plain data: strictly (an unknown
// key, a wrong type, a bad duration, two kinds in one check are errors),
// reporting every error at once with its file, line, column and path, and
// checking every check as building it would, so that a bad file starts
// nothing. It builds nothing itself: a check's kind is read through the table
// of kinds it is given (package kinds, which imports config), and whoever
// runs the file builds the checkers, the hooks and the workload from it
// (packages hooks and supervise take its Hook and Service as they are, each
// default filled in and defined here). Kinds read their blocks with the Decoder, Field and Value of decode.go.
package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/apisocket"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/redact"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/yamlnode"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/escape"
)

// Config is a vitals.yaml, or the merge of its layers (LoadLayers).
type Config struct {
	// File names what was read, as messages about the whole say it: the
	// file (stdin for -), or the layers' files joined by ", ".
	File string
	// Files are the files read, in the order they were merged (LayerFiles):
	// one, unless the configuration was read in layers.
	Files []string
	// Paths are what the files were named by, a directory as itself: a
	// reload reads them again, so that a file added to a directory is a
	// layer of the next read. Empty when the configuration was parsed from
	// bytes (Parse).
	Paths []string
	// Origins says where the layers give each key of the merged file, by
	// its path as errors write it (checks.web.period): one place, or, for
	// an entry or a mapping that merged, each layer's in order. nil for a
	// single file, where every value is the file's.
	Origins map[string][]Position
	// Listen is where the probe endpoints are served. Default ":8558".
	Listen string
	// GRPCListen is where grpc.health.v1 is served over the same checks;
	// empty (the default): not served.
	GRPCListen string
	// API is where the management API listens: a path for a unix socket
	// (mode 0600), or tcp://HOST:PORT, which needs APITokenFile. Default
	// apisocket.Default(), the user's own: /run/vitals/vitals.sock for root
	// where /run can be written, else in $XDG_RUNTIME_DIR or the temp
	// directory, so that vitals runs as any user, on a read-only root too.
	API string
	// APIDefault says that API is the default, not given in the file: when
	// its directory cannot be made and nothing needs the API (no heartbeat
	// or watchdog check is fed through it), the agent runs without it rather than
	// not at all.
	APIDefault bool
	// apiAt is where the file gives api:, for APIErrorf.
	apiAt Error
	// APITokenFile holds the bearer token that a TCP API asks for.
	APITokenFile string
	// Details says who is shown why checks fail on the probe endpoints,
	// and who may read the status page, its JSON and its events. Default
	// DefaultDetails (local): the clients on loopback, and those that prove
	// who they are (Auth, TLS.ClientCAFile).
	Details Details
	// UI serves the status page at / on Listen, with its JSON under
	// /ui/api/, to whom Details lets read it. Default true.
	UI bool
	// History is where the checks' kept results are saved across restarts;
	// the zero History (the default): nowhere.
	History History
	// TLS makes Listen serve HTTPS; nil (the default): plain HTTP.
	TLS *TLS
	// Auth is how a client off loopback proves it may see what one on
	// loopback sees; the zero Auth (the default): only by a client
	// certificate of TLS.ClientCAFile.
	Auth Auth
	// ServiceInfo is what the IETF health+json answers say of the service
	// at their top: its ServiceID is by default the host's name, which in a
	// pod is the pod's; Version and ReleaseID are none by default.
	ServiceInfo health.ServiceInfo
	// Checks, in the order of the file.
	Checks []Check
	// Services are the workloads vitals runs and supervises, in the order
	// they start (they stop in reverse); none: vitals runs checks only, or
	// the command line gives the one workload. The service: block is one
	// service.
	Services []Service
	// Shorthand says that the file gave the service: block rather than
	// services:.
	Shorthand bool
	// Drain is how long readiness fails before the workload is stopped, on
	// SIGTERM or SIGINT. Default 0.
	Drain time.Duration
	// Hooks, in the file's order, each with its defaults filled in.
	Hooks []Hook
	// Kubernetes says what the agent tells Kubernetes about its pod; nil
	// (the default): nothing.
	Kubernetes *Kubernetes
	// redactor hides the file's secrets.
	redactor *redact.Redactor
}

// Redact hides the file's secrets in s: the values of variables named like
// *PASSWORD*, *PASSWD*, *TOKEN*, *SECRET*, *KEY*, *CREDENTIAL* or *SIGNATURE* (at least 4 characters long),
// the credentials of headers, and passwords and tokens written in URLs (see
// package redact). The agent passes every check output, event and log line
// through it.
func (c *Config) Redact(s string) string { return c.redactor.Redact(s) }

// Redactor is what Redact hides: the file's secrets, for a reader that
// keeps them beside another file's (a reload: redact.Redactor.With).
func (c *Config) Redactor() *redact.Redactor { return c.redactor }

// APIErrorf is an error of the api: the file gives (not APIDefault), where
// the file gives it: what only the agent finds when it makes the socket, such
// as a directory that takes none. A Config that was not read from a file
// has no position to give: the error names the file alone.
func (c *Config) APIErrorf(format string, args ...any) Error {
	e := cmp.Or(c.apiAt, Error{File: c.File, Path: "api"})
	e.Msg = fmt.Sprintf(format, args...)
	return e
}

// ErrorAt is an Error at path (listen, services.web), saying what format
// says: at the place of the layer that gives it last, with several layers;
// in the file, with one, whose top-level keys keep no place.
func (c *Config) ErrorAt(path, format string, args ...any) Error {
	e := Error{File: c.File, Path: path, Msg: fmt.Sprintf(format, args...)}
	if at := c.Origins[path]; len(at) > 0 {
		last := at[len(at)-1]
		e.File, e.Line, e.Column = last.File, last.Line, last.Column
	}
	return e
}

// Where is where the file gives the value at path, for the errors of what
// it names that vitals finds wrong as it runs: FILE:LINE of the layer that
// gives it last, with several layers; the file's name with one.
func (c *Config) Where(path string) string {
	if at := c.Origins[path]; len(at) > 0 {
		return at[len(at)-1].String()
	}
	return c.File
}

// Defaults of the file's top level; api's is apisocket.Default(), which
// depends on the user.
const DefaultListen = ":8558"

// MinPeriod is the shortest period a check may have, and the shortest
// backoff.max of a service: more often is a busy loop (period: 1ns keeps a
// core busy), not a check. The kubelet's floor is 1s; vitals allows
// sub-second periods, for cheap checks and quick tests.
const MinPeriod = 10 * time.Millisecond

// Error is one thing wrong with a file, where it is.
type Error struct {
	File         string
	Line, Column int
	Path         string // such as checks.mq.amqp.url
	Msg          string
}

// Error is one line, FILE:LINE:COL: PATH: MESSAGE, with what a terminal
// would act on escaped (escape.Line): a key or a value of the file may hold a
// line break, a NUL, an escape sequence or a bidi override (U+202E), and an
// error must neither forge another line nor read otherwise than it is.
func (e Error) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Column)
	}
	if e.Path == "" {
		return escape.Line(where + ": " + e.Msg)
	}
	return escape.Line(where + ": " + e.Path + ": " + e.Msg)
}

// Errors is everything wrong with a file, in the file's order.
type Errors []Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// MaxFileSize is the most Load reads of a file. A vitals.yaml of thousands
// of checks is well under 1 MiB; the bound is for a path that never ends
// (/dev/zero, a FIFO whose writer keeps writing) or a file given by mistake,
// which would otherwise be read, and parsed, until memory runs out.
const MaxFileSize = 4 << 20

// Options say how Load checks a file.
type Options struct {
	// Offline checks the file for another machine than this one, such as a
	// CI job on another image than the one vitals runs in: nothing is
	// looked for on this machine. The commands of exec checks and exec
	// hooks are not looked up in $PATH, an exec check's working directory
	// is not looked for, and the files that are mounted where vitals runs
	// (the TLS fields' ca-file, cert and key, a bearer-token-file,
	// api-token-file, tls: and auth:'s files) are not read.
	// Everything else is checked, ${VAR}s included. Default false: the
	// file is checked for this machine.
	Offline bool
}

// Load reads and checks the file at path, - for stdin, its checks' kinds
// read through kinds; ${VAR} expands from the process's environment. A path
// that is a directory is its files read as layers (LoadLayers). The
// error is an Errors when the file is readable but wrong.
func Load(path string, kinds Kinds, o Options) (*Config, error) {
	return LoadLayers([]string{path}, kinds, o)
}

// LoadLayers reads and checks the files that paths name (LayerFiles), -
// for stdin, as layers: each later one merged over those before it (see
// layers.go), the merge checked as one file is. Each file is read through
// whatever its path names, a symlink (as a Kubernetes ConfigMap mounts
// one), a FIFO or a device, and never past MaxFileSize. The error is an
// Errors, every layer's, when the files are readable but wrong.
func LoadLayers(paths []string, kinds Kinds, o Options) (*Config, error) {
	files, err := LayerFiles(paths)
	if err != nil {
		return nil, err
	}
	layers := make([]Layer, len(files))
	var errs Errors
	for i, path := range files {
		l, err := readLayer(path)
		if e, ok := errors.AsType[Error](err); ok {
			errs = append(errs, e) // too large: said with the other layers'
			continue
		} else if err != nil {
			return nil, err
		}
		layers[i] = l
	}
	if len(errs) > 0 {
		return nil, errs
	}
	c, err := parseIn(layers, os.LookupEnv, os.Environ(), kinds, o)
	if c != nil {
		c.Paths = paths
	}
	return c, err
}

// Layer is one file of a configuration read in layers: its name, as errors
// say it, and its contents.
type Layer struct {
	File string
	Data []byte
}

// readLayer reads the file at path, - for stdin, never past MaxFileSize;
// the error is an Error when the file is too large.
func readLayer(path string) (Layer, error) {
	name, r := "stdin", io.Reader(os.Stdin)
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return Layer{}, fmt.Errorf("read configuration: %w", err)
		}
		defer f.Close()
		name, r = path, f
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return Layer{}, fmt.Errorf("read configuration: %w", err)
	}
	if len(data) > MaxFileSize {
		// Said where the bound falls: the first byte not read.
		line := 1 + bytes.Count(data[:MaxFileSize], []byte("\n"))
		col := MaxFileSize - bytes.LastIndexByte(data[:MaxFileSize], '\n')
		return Layer{}, Error{File: name, Line: line, Column: col,
			Msg: fmt.Sprintf("larger than %d MiB: is it the configuration? (it is read no further)", MaxFileSize>>20)}
	}
	return Layer{File: name, Data: data}, nil
}

// bom is the byte order mark that some editors write at the start of a
// UTF-8 file; YAML allows it there, and it is no part of the first key.
const bom = "\uFEFF"

// Parse checks a file's contents; name is what errors call the file, env
// looks up the variables that ${VAR} names, and kinds has the kinds its
// checks may have.
func Parse(name string, data []byte, env func(string) (string, bool), kinds Kinds) (*Config, error) {
	return parseIn([]Layer{{name, data}}, env, nil, kinds, Options{})
}

// ParseLayers is Parse of layers, in order, each merged over those before
// it, as LoadLayers merges the files.
func ParseLayers(layers []Layer, env func(string) (string, bool), kinds Kinds) (*Config, error) {
	return parseIn(layers, env, nil, kinds, Options{})
}

// parseIn is ParseLayers that also hides the secrets of environ, the
// environment vitals runs in: its exec checks and its workload inherit
// it, and a command may print $DB_PASSWORD though the file never names it
// (as vitals probe hides them).
func parseIn(layers []Layer, env func(string) (string, bool), environ []string, kinds Kinds, o Options) (*Config, error) {
	d := &Decoder{env: env, offline: o.Offline, secrets: redact.Environ(environ)}
	var bodies []ast.Node
	var errs Errors
	for i, l := range layers {
		// CRLF line ends read as LF, as YAML reads them: the lexer counts a
		// comment's CRLF as two lines, which would put errors below the
		// file's end (a file edited on Windows).
		src := bytes.ReplaceAll(bytes.TrimPrefix(l.Data, []byte(bom)), []byte("\r\n"), []byte("\n"))
		d.layers = append(d.layers, source{l.File, src})
		f, err := yamlnode.Parse(src)
		if err != nil {
			errs = append(errs, syntaxError(l.File, err))
			continue
		}
		if len(layers) > 1 {
			if d.of == nil {
				d.of = map[*token.Token]int{}
			}
			for _, doc := range f.Docs {
				ast.Walk(tokens{d.of, i}, doc)
			}
		}
		if len(f.Docs) > 1 {
			d.Errorf(f.Docs[1].Body, "", "one YAML document per file, not %d", len(f.Docs))
		}
		if len(f.Docs) > 0 && f.Docs[0].Body != nil {
			body := f.Docs[0].Body
			ast.Walk(tagChecker{d}, body)
			bodies = append(bodies, body)
		}
	}
	if len(errs) > 0 {
		// A layer that does not parse cannot be merged; what the others'
		// documents say wrong is said with it.
		return nil, append(errs, d.errors...)
	}
	c := defaults()
	for _, l := range d.layers {
		c.Files = append(c.Files, l.file)
	}
	c.File = strings.Join(c.Files, ", ")
	var body ast.Node
	switch {
	case len(bodies) == 1:
		body = bodies[0]
	case len(bodies) > 1:
		g := &merging{d: d, kinds: kinds, from: map[*ast.MappingValueNode][]*ast.MappingValueNode{}}
		body = g.merge(bodies)
		if body != nil {
			c.Origins = g.origins(body)
		}
	}
	if body == nil && len(d.errors) > 0 {
		return nil, d.sorted(c)
	}
	if body == nil {
		empty := "the file is empty"
		if len(layers) > 1 {
			empty = "the files are empty"
		}
		return nil, Errors{{File: c.File, Msg: empty + ": it needs checks:, or a service: to supervise"}}
	}
	var checks ast.Node
	given, _ := d.Fields(body, "", topFields(c, &checks))
	c.APIDefault = given["api"] == nil
	if !c.APIDefault {
		p := d.position(given["api"])
		c.apiAt = Error{File: p.File, Line: p.Line, Column: p.Column, Path: "api"}
	}
	var checkFields map[string]Given
	if checks != nil {
		c.Checks, checkFields = d.checks(checks, kinds)
	}
	if given["service"] != nil && given["services"] != nil {
		d.Errorf(given["services"], "services", "give service: (one workload) or services:, not both")
	}
	d.checkServices(c, checkFields)
	// A file runs checks, a workload, or both: with neither, vitals would
	// serve endpoints that always pass.
	if len(c.Services) == 0 && given["service"] == nil && given["services"] == nil {
		if m, ok := yamlnode.Unwrap(checks).(*ast.MappingNode); checks == nil && given != nil || ok && len(m.Values) == 0 {
			d.Errorf(cmp.Or(checks, body), "checks", "no checks: give at least one, or a service: to supervise")
		}
	}
	c.redactor = redact.New(d.secrets...)
	d.address(c, body, given)
	if len(d.errors) > 0 {
		return nil, d.sorted(c)
	}
	return c, nil
}

// sorted is d's errors in the order of the layers, and of each file's
// lines, with what c hides hidden: an error may quote a value with a
// secret in it (an expanded ${DB_PASSWORD}, a URL), and the lines go to
// terminals and CI logs.
func (d *Decoder) sorted(c *Config) Errors {
	slices.SortStableFunc(d.errors, d.rank)
	if c.redactor == nil {
		c.redactor = redact.New(d.secrets...)
	}
	for i := range d.errors {
		d.errors[i].Msg = c.Redact(d.errors[i].Msg)
	}
	return d.errors
}

// address checks the listen and api addresses and reads the token file, so
// that a file that validates is a file whose servers start: each address
// HOST:PORT with a port that net.Listen takes, no two on one port, a socket
// path that fits.
func (d *Decoder) address(c *Config, body ast.Node, given Given) {
	listen, grpcListen, api := cmp.Or(given["listen"], body), cmp.Or(given["grpc-listen"], body), cmp.Or(given["api"], body)
	// The TCP addresses that are good, in the file's order of precedence,
	// each checked against those before it.
	type server struct {
		name, addr string
		at         ast.Node
	}
	var servers []server
	tcp := func(at ast.Node, name, addr, shape string) {
		hostport := strings.TrimPrefix(addr, "tcp://")
		host, port, err := net.SplitHostPort(hostport)
		switch {
		case err != nil || port == "":
			d.Errorf(at, name, "%q is not %s", addr, shape)
			return
		case !validPort(port):
			d.Errorf(at, name, "%q: port %q is not a number from 0 to 65535 (0: any free port) or a service name", addr, port)
			return
		case !validHost(host):
			d.Errorf(at, name, "%q: host %q is not an IP address or a host name", addr, host)
			return
		}
		for _, s := range servers {
			if h, p, _ := net.SplitHostPort(s.addr); samePort(host, port, h, p) {
				d.Errorf(at, name, "%q shares a port with %s (%q): give each its own port", addr, s.name, s.addr)
				return
			}
		}
		servers = append(servers, server{name, hostport, at})
	}
	tcp(listen, "listen", c.Listen, "HOST:PORT (or :PORT)")
	if c.GRPCListen != "" {
		tcp(grpcListen, "grpc-listen", c.GRPCListen, "HOST:PORT (or :PORT)")
	}
	switch {
	case strings.HasPrefix(c.API, "tcp://"):
		tcp(api, "api", c.API, "tcp://HOST:PORT")
		tokenFile := cmp.Or(given["api-token-file"], api)
		switch {
		case c.APITokenFile == "":
			d.Errorf(api, "api", "a TCP API (%s) needs api-token-file: anyone who reaches the port could stop checks", c.API)
		case d.Offline():
			// The token is a secret mounted where vitals runs: not read here.
		default:
			d.tokenFile(tokenFile, "api-token-file", c.APITokenFile)
		}
	case strings.Contains(c.API, "://"):
		d.Errorf(api, "api", "%q: give a socket path, or tcp://HOST:PORT", c.API)
	case c.API == "":
		d.Errorf(api, "api", "empty: give a socket path, or tcp://HOST:PORT")
	default:
		if err := apisocket.Check(c.API); err != nil {
			d.Errorf(api, "api", "%v", err)
		}
	}
}

// validPort reports whether net.Listen takes port: a number from 0 to
// 65535, or a service name (such as http). Port 0 is accepted: the kernel
// gives any free port, which suits tests, though no prober can know it.
func validPort(port string) bool {
	_, err := net.LookupPort("tcp", port)
	return err == nil
}

// validHost reports whether net.Listen could take host: empty (every
// address), an IP address (an IPv6 one with a zone too), or a host name of
// letters, digits, dots, hyphens and underscores; not a NUL, a space or a
// control character, which no resolver takes.
func validHost(host string) bool {
	if host == "" || net.ParseIP(host) != nil {
		return true
	}
	if ip, zone, ok := strings.Cut(host, "%"); ok && net.ParseIP(ip) != nil && zone != "" {
		return true
	}
	return strings.Trim(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") == ""
}

// sameHost reports whether two hosts name one address: equal IP addresses
// however written (::1 and 0:0:0:0:0:0:0:1), localhost and its loopback
// addresses, or the same name.
func sameHost(h1, h2 string) bool {
	ips := func(h string) []net.IP {
		if strings.EqualFold(h, "localhost") {
			return []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		}
		if ip := net.ParseIP(h); ip != nil {
			return []net.IP{ip}
		}
		return nil
	}
	for _, a := range ips(h1) {
		for _, b := range ips(h2) {
			if a.Equal(b) {
				return true
			}
		}
	}
	return strings.EqualFold(h1, h2)
}

// samePort reports whether two listening addresses would take one port: the
// same port, and hosts that are the same (sameHost), or one of them every
// address (an empty host or ::, or 0.0.0.0 beside an IPv4 or a name). Port
// 0 is never the same: each listener gets a port of its own.
func samePort(host1, port1, host2, port2 string) bool {
	p1, err1 := net.LookupPort("tcp", port1)
	p2, err2 := net.LookupPort("tcp", port2)
	if err1 != nil || err2 != nil || p1 != p2 || p1 == 0 {
		return false
	}
	everywhere := func(h, other string) bool {
		ip := net.ParseIP(other)
		return h == "" || h == "::" || h == "0.0.0.0" && (ip == nil || ip.To4() != nil)
	}
	return sameHost(host1, host2) || everywhere(host1, host2) || everywhere(host2, host1)
}

// coreTags are the tags of YAML's core schema, each with whether it fits a
// value: vitals accepts them where they say what the value is anyway.
var coreTags = map[string]func(ast.Node) bool{
	"!!str": func(n ast.Node) bool { _, ok := n.(ast.ScalarNode); return ok },
	"!!int": func(n ast.Node) bool { _, ok := n.(*ast.IntegerNode); return ok },
	"!!float": func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode, *ast.IntegerNode:
			return true
		}
		return false
	},
	"!!bool": func(n ast.Node) bool { _, ok := n.(*ast.BoolNode); return ok },
	"!!null": func(n ast.Node) bool { _, ok := n.(*ast.NullNode); return ok },
	"!!map":  func(n ast.Node) bool { _, ok := n.(*ast.MappingNode); return ok },
	"!!seq":  func(n ast.Node) bool { _, ok := n.(*ast.SequenceNode); return ok },
}

// tagChecker finds the tags of a file that vitals would otherwise ignore
// (the decoder reads a value as it is written): a tag of the file's own
// (!foo), a YAML tag that changes the value (!!binary, !!timestamp), or a
// core one on a value of another kind (!!int on a word).
type tagChecker struct{ d *Decoder }

func (t tagChecker) Visit(n ast.Node) ast.Visitor {
	tag, ok := n.(*ast.TagNode)
	if !ok {
		return t
	}
	name := tag.Start.Value
	fits, core := coreTags[name]
	switch {
	case !core:
		t.d.Errorf(tag, "", "YAML tag %s is not one vitals reads: leave it out (%s are accepted, each on a value of its kind)", name, coreTagList)
	case !fits(yamlnode.Unwrap(tag.Value)):
		t.d.Errorf(tag, "", "YAML tag %s does not fit its value, %s", name, yamlnode.Describe(tag.Value))
	}
	return t
}

// coreTagList names the coreTags, for errors.
const coreTagList = "!!str, !!int, !!float, !!bool, !!null, !!map and !!seq"

// syntaxError turns the parser's error into an Error with its position.
func syntaxError(name string, err error) Error {
	var de *yamlnode.DepthError
	if errors.As(err, &de) {
		return Error{File: name, Line: de.Line, Column: de.Column,
			Msg: fmt.Sprintf("YAML: %v: a vitals.yaml needs a handful", err)}
	}
	var ze *yamlnode.SizeError
	if errors.As(err, &ze) {
		return Error{File: name, Line: ze.Line, Column: ze.Column,
			Msg: fmt.Sprintf("YAML: %v: is it the configuration? (it is read no further)", err)}
	}
	var se *yaml.SyntaxError
	if errors.As(err, &se) && se.Token != nil && se.Token.Position != nil {
		p := se.Token.Position
		return Error{File: name, Line: p.Line, Column: p.Column, Msg: "YAML: " + se.Message}
	}
	return Error{File: name, Msg: "YAML: " + err.Error()}
}

// topFields are the fields of the file's top level, read into c; the checks
// mapping is read after the rest (checks), so that its errors come with the
// table of kinds.
func topFields(c *Config, checks *ast.Node) []Field {
	return []Field{
		{Key: "listen", Value: String(&c.Listen), Default: DefaultListen,
			Doc: "Where the probe endpoints (/livez, /readyz, /startupz) and /metrics are served: HOST:PORT, or :PORT for every address."},
		{Key: "grpc-listen", Value: String(&c.GRPCListen),
			Doc: "Where grpc.health.v1 is served over the same checks, HOST:PORT; by default it is not."},
		{Key: "api", Value: CString(&c.API), Default: "/run/vitals/vitals.sock, $XDG_RUNTIME_DIR/vitals/vitals.sock or $TMPDIR/vitals-UID/vitals.sock", Described: true,
			Doc: "Where the management API listens: a unix socket's path (mode 0600), or tcp://HOST:PORT, which needs api-token-file. " +
				"By default the user's own, where vitals checks and the other commands look for the same user: /run/vitals/vitals.sock for root while /run can be written; " +
				"else $XDG_RUNTIME_DIR/vitals/vitals.sock when XDG_RUNTIME_DIR is a directory of the user's that only the user can enter; " +
				"else vitals-UID/vitals.sock in $TMPDIR (/tmp when unset), a directory made 0700 and refused when another user owns it or others can enter it. " +
				"vitals validate --print shows the one chosen. vitals run makes the socket's directory when missing; one it cannot make or write is an error of this field, before anything starts. " +
				"Without api:, when the default's directory cannot be made (a read-only root with no writable temp directory) and no heartbeat or watchdog check needs the API, vitals runs with the API off and logs a warning that says so."},
		{Key: "api-token-file", Value: CString(&c.APITokenFile),
			Doc: "A file holding the bearer token that a TCP API asks for."},
		{Key: "details", Value: detailsValue(&c.Details), Default: string(DefaultDetails),
			Doc: "Who is shown why checks fail on the probe endpoints, and who may read the status page, its JSON and its events. " +
				"local: the clients on loopback (kubectl port-forward, an exec into the pod) and those that give auth:'s token or a client certificate of tls.client-ca-file; every other client gets the status codes and the checks' names, each reason \"reason withheld\", and 403 (401 with auth:) for the page, as the kube-apiserver answers whoever may not see more. " +
				"all: every client sees everything, as every pod that can reach the pod's address. none: the reasons are withheld from every client, and the page, shown as local shows it, carries no output. " +
				"true is all and false none, their meaning before local. /metrics and gRPC health answer every client whatever it says."},
		{Key: "ui", Value: Bool(&c.UI), Default: "true",
			Doc: "Serves the status page on listen, to whom details: lets read it: at / (its files under /ui/, its JSON at /ui/api/status and /ui/api/events): the levels, every check with its kept results, the workload and the events, live. Read-only; false turns it off."},
		{Key: "history", Value: Value{"mapping", func(d *Decoder, n ast.Node, path string) { c.History = d.historyBlock(n, path) }, Ref("history")},
			Doc: "Saves each check's kept results in a file (below), so that a restart of vitals keeps what the status page shows of them; by default they are kept in memory only."},
		{Key: "tls", Value: Value{"mapping", func(d *Decoder, n ast.Node, path string) { c.TLS = d.tlsBlock(n, path) }, Ref("tls")},
			Doc: "Serves listen over HTTPS (below), its certificate read again when its files change. The kubelet's httpGet probes need scheme: HTTPS then, and do not check the certificate; grpc-listen stays plain (the kubelet's grpc probes speak no TLS)."},
		{Key: "auth", Value: Value{"mapping", func(d *Decoder, n ast.Node, path string) { c.Auth = d.authBlock(n, path) }, Ref("auth")},
			Doc: "How a client off loopback proves it may see what one on loopback sees (details: local): a bearer token (below)."},
		{Key: "service-info", Value: Value{"mapping", func(d *Decoder, n ast.Node, path string) { d.Fields(n, path, serviceInfoFields(&c.ServiceInfo)) }, Ref("service-info")},
			Doc: "What the IETF health+json answers of the probe endpoints say of the service at their top: serviceId, version and releaseId (below)."},
		{Key: "checks", Value: Value{"mapping of names to checks", func(_ *Decoder, n ast.Node, _ string) { *checks = n },
			Schema{"type": "object", "propertyNames": nameSchema, "additionalProperties": Ref("checks.NAME")}},
			Doc: "The checks, by name (lower case letters, digits and - _ . inside, at most 63 characters), each with one kind (below). A file without a service: needs at least one."},
		{Key: "service", Value: Value{"mapping", func(d *Decoder, n ast.Node, path string) {
			var order serviceOrder
			c.Services, c.Shorthand = []Service{shorthand(d.service(n, path, &order))}, true
			for _, r := range order.refs {
				d.Errorf(r.at, r.path, "the one service of service: has no other to be ordered by: give services: for several")
			}
		}, Ref("service")},
			Doc: "The one workload vitals runs and supervises (below), named by its command's base name: the same as services: with one entry. The command after -- on vitals run's command line takes its command's place."},
		{Key: "services", Value: Value{"mapping of names to services", func(d *Decoder, n ast.Node, path string) { c.Services = d.services(n, path) },
			Schema{"type": "object", "propertyNames": nameSchema, "additionalProperties": Ref("services.NAME"), "minProperties": 1}},
			Doc: "The workloads vitals runs and supervises, by name (as check names are spelled), each with the fields of service: (below) and its order: started in the order of after, before and requires (by name where they leave a choice), stopped in reverse. With one entry, the command after -- takes its command's place."},
		{Key: "drain", Value: Duration(&c.Drain), Default: "0s",
			Doc: "How long readiness fails before the workload is stopped, on SIGTERM or SIGINT: time for the endpoints' clients to notice."},
		{Key: "hooks", Value: Value{"list of hooks", func(d *Decoder, n ast.Node, _ string) { c.Hooks = d.hooks(n) },
			Schema{"type": "array", "items": Ref("hooks[]")}},
			Doc: "What runs on the events, each hook an exec, a webhook or a Pebble notice (below)."},
		{Key: "kubernetes", Value: Value{"mapping", func(d *Decoder, n ast.Node, path string) { c.Kubernetes = d.kubernetes(n, path) }, Ref("kubernetes")},
			Doc: "What the agent tells Kubernetes about its pod, named by POD_NAME and POD_NAMESPACE from the downward API (below)."},
	}
}

// Default is the configuration of a vitals run given no file: no checks,
// no service (the command line gives the workload), and every top-level
// default (DefaultListen, apisocket.Default(), details local, no drain, the
// host's name as service-id). The
// environment's secrets are hidden as Load hides them. File is empty: no
// file was read.
func Default() *Config {
	c := defaults()
	c.redactor = redact.New(redact.Environ(os.Environ())...)
	return c
}

// defaults is a file's top level before the file is read: every default of
// it, which the file's keys replace.
func defaults() *Config {
	return &Config{Listen: DefaultListen, API: apisocket.Default(), APIDefault: true, Details: DefaultDetails, UI: true,
		ServiceInfo: health.ServiceInfo{ServiceID: hostname()}}
}

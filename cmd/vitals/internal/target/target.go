// Package target turns what a user types — a URL whose scheme names the kind,
// or a command line, and the flags that go with the kind — into a probe. The
// one-shot commands (vitals probe, vitals wait) share it.
package target

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/vitals-dev/vitals/grpchealth"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// Options are the kinds' options as flags give them. Set says which flags
// the user gave, so that a flag that does not fit a target's kind is an error
// rather than silently ignored.
type Options struct {
	Method      string
	Status      string
	Body        string
	NotBody     string
	Header      []string // "Name: value"
	Insecure    bool
	CAFile      string
	CertFile    string
	KeyFile     string
	ServerName  string
	Send        string // with \r \n \t \\ \xHH escapes
	Expect      string
	NonEmpty    bool
	Regular     bool
	MaxAge      time.Duration
	Content     string
	Type        string
	Answer      []string
	MinValidity time.Duration
	Env         []string
	Dir         string
	Namespace   string
	Kubeconfig  string
	Context     string

	Set func(flag string) bool // whether the user gave the flag; nil means none
}

// flag is one kind option as a command-line flag: the one table that names
// it, says which kinds take it, and binds it to its field.
type flag struct {
	name  string
	kinds []string
	bind  func(f *pflag.FlagSet, o *Options, name, usage string)
	usage string
	file  bool // its value is a file name, for shell completion
}

func str(p func(*Options) *string) func(*pflag.FlagSet, *Options, string, string) {
	return func(f *pflag.FlagSet, o *Options, name, usage string) { f.StringVar(p(o), name, "", usage) }
}

// shorthand is str with a one-letter name as well: -n, as kubectl has it.
func shorthand(letter string, p func(*Options) *string) func(*pflag.FlagSet, *Options, string, string) {
	return func(f *pflag.FlagSet, o *Options, name, usage string) { f.StringVarP(p(o), name, letter, "", usage) }
}

func strs(p func(*Options) *[]string) func(*pflag.FlagSet, *Options, string, string) {
	return func(f *pflag.FlagSet, o *Options, name, usage string) { f.StringArrayVar(p(o), name, nil, usage) }
}

func boolean(p func(*Options) *bool) func(*pflag.FlagSet, *Options, string, string) {
	return func(f *pflag.FlagSet, o *Options, name, usage string) { f.BoolVar(p(o), name, false, usage) }
}

func duration(p func(*Options) *time.Duration) func(*pflag.FlagSet, *Options, string, string) {
	return func(f *pflag.FlagSet, o *Options, name, usage string) { f.DurationVar(p(o), name, 0, usage) }
}

var (
	httpOnly = []string{"http"}
	withTLS  = []string{"http", "tls", "grpc"}
	kubeOnly = []string{"k8s"}
)

var flags = []flag{
	{"method", httpOnly, str(func(o *Options) *string { return &o.Method }), "http: request method (default GET)", false},
	{"status", httpOnly, str(func(o *Options) *string { return &o.Status }), "http: statuses that pass, as codes and ranges (default 200-399)", false},
	{"body", httpOnly, str(func(o *Options) *string { return &o.Body }), "http: a regular expression the body must match (first 10 KiB)", false},
	{"not-body", httpOnly, str(func(o *Options) *string { return &o.NotBody }), "http: a regular expression the body must not match", false},
	{"header", httpOnly, strs(func(o *Options) *[]string { return &o.Header }), `http: a request header "Name: value" (repeatable; Host sets the virtual host)`, false},
	{"insecure", withTLS, boolean(func(o *Options) *bool { return &o.Insecure }), "http, tls, grpc: accept any server certificate", false},
	{"ca-file", withTLS, str(func(o *Options) *string { return &o.CAFile }), "http, tls, grpc: PEM roots to verify the server with", true},
	{"cert", withTLS, str(func(o *Options) *string { return &o.CertFile }), "http, tls, grpc: PEM client certificate", true},
	{"key", withTLS, str(func(o *Options) *string { return &o.KeyFile }), "http, tls, grpc: PEM key of the client certificate", true},
	{"server-name", withTLS, str(func(o *Options) *string { return &o.ServerName }), "http, tls, grpc: the name to verify and send as SNI", false},
	{"send", []string{"tcp"}, str(func(o *Options) *string { return &o.Send }), `tcp: bytes to send after connecting (escapes \r \n \t \\ \xHH)`, false},
	{"expect", []string{"tcp"}, str(func(o *Options) *string { return &o.Expect }), "tcp: text the answer must contain (same escapes)", false},
	{"non-empty", []string{"file"}, boolean(func(o *Options) *bool { return &o.NonEmpty }), "file: the file must not be empty (a directory: must have an entry)", false},
	{"regular", []string{"file"}, boolean(func(o *Options) *bool { return &o.Regular }), "file: the file must be a regular file", false},
	{"max-age", []string{"file"}, duration(func(o *Options) *time.Duration { return &o.MaxAge }), "file: the file must have been modified within this long", false},
	{"content", []string{"file"}, str(func(o *Options) *string { return &o.Content }), "file: a regular expression the content must match (first 64 KiB)", false},
	{"type", []string{"dns"}, str(func(o *Options) *string { return &o.Type }), "dns: record type: A, AAAA, CNAME, MX, TXT or NS (default any address)", false},
	{"answer", []string{"dns"}, strs(func(o *Options) *[]string { return &o.Answer }), "dns: an answer that must be among the answers (repeatable)", false},
	{"min-validity", []string{"tls"}, duration(func(o *Options) *time.Duration { return &o.MinValidity }), "tls: the certificate must stay valid at least this long", false},
	{"env", []string{"exec"}, strs(func(o *Options) *[]string { return &o.Env }), "exec: KEY=VALUE for the command's environment (repeatable)", false},
	{"dir", []string{"exec"}, str(func(o *Options) *string { return &o.Dir }), "exec: working directory of the command", true},
	{"namespace", kubeOnly, shorthand("n", func(o *Options) *string { return &o.Namespace }), "k8s: the namespace (default: the kubeconfig context's, or the pod's own)", false},
	{"kubeconfig", kubeOnly, str(func(o *Options) *string { return &o.Kubeconfig }), "k8s: the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in a pod its service account)", true},
	{"context", kubeOnly, str(func(o *Options) *string { return &o.Context }), "k8s: the kubeconfig context to use (default: its current context)", false},
}

// RecordTypes are the values of --type, for shell completion.
var RecordTypes = []string{"A", "AAAA", "CNAME", "MX", "TXT", "NS"}

// DefineFlags defines every kind flag on f, bound to o. The flags of k8s://
// targets are hidden in the probe build, which has none: given, they are
// still read, so that the target is what says where k8s:// is.
func DefineFlags(f *pflag.FlagSet, o *Options) {
	for _, fl := range flags {
		fl.bind(f, o, fl.name, fl.usage)
		if fl.file {
			f.SetAnnotation(fl.name, cobraFilename, []string{})
		}
		if !KubeBuilt && slices.Equal(fl.kinds, kubeOnly) {
			f.MarkHidden(fl.name)
		}
	}
}

// cobraFilename is cobra's annotation for a flag that takes a file name.
const cobraFilename = "cobra_annotation_bash_completion_filename"

// KindsOf returns the kinds that take the named flag, nil for a flag that is
// not a kind flag.
func KindsOf(name string) []string {
	for _, fl := range flags {
		if fl.name == name {
			return fl.kinds
		}
	}
	return nil
}

// Given returns the kind flags the user gave, in the table's order.
func (o Options) Given() []string {
	var out []string
	for _, fl := range flags {
		if o.Set != nil && o.Set(fl.name) {
			out = append(out, fl.name)
		}
	}
	return out
}

// schemes are the target schemes and the kinds they name. The probe build
// knows k8s and the dependencies' too, to say that their targets are in the
// full build. NATS over TLS is nats:// too (nats.go turns to TLS when the
// server requires it): tls:// is the TLS handshake.
var schemes = map[string]string{
	"http": "http", "https": "http", "tcp": "tcp", "file": "file", "dns": "dns", "tls": "tls",
	"grpc": "grpc", "grpcs": "grpc", "k8s": "k8s",
	"postgres": "postgres", "postgresql": "postgres", "redis": "redis", "rediss": "redis",
	"amqp": "amqp", "amqps": "amqp", "nats": "nats",
}

// schemeNames are the schemes of this build, in the order that messages
// list them.
var schemeNames = func() []string {
	names := []string{"http", "https", "tcp", "file", "dns", "tls", "grpc", "grpcs"}
	if DepsBuilt {
		names = append(names, "postgres", "postgresql", "redis", "rediss", "amqp", "amqps", "nats")
	}
	if KubeBuilt {
		names = append(names, "k8s")
	}
	return names
}()

// oneShotless are the kinds of vitals.yaml that no one-shot command can
// run, and why: what they judge happens over time, inside vitals run.
var oneShotless = map[string]string{
	"log": "a log check reads the output of the workload that vitals run supervises, as it comes, " +
		"and vitals probe and vitals wait have no workload: give it as a log: check in vitals.yaml",
	"heartbeat": "a heartbeat is beaten by the workload (vitals beat NAME) and judged by the vitals run it beats, " +
		"and there is no beat to look at once: ask that vitals with vitals check NAME",
}

// KindOf says which kind a target is, or why it is none.
func KindOf(target string) (string, error) {
	scheme, rest, ok := strings.Cut(target, ":")
	if why, ok := oneShotless[strings.ToLower(scheme)]; ok {
		return "", fmt.Errorf("target %q: %s", target, why)
	}
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/.") {
		return "", fmt.Errorf("target %q has no scheme: use %s://, or -- COMMAND for exec", target, strings.Join(schemeNames, "://, "))
	}
	kind, known := schemes[strings.ToLower(scheme)]
	switch {
	case !known:
		last := len(schemeNames) - 1
		return "", fmt.Errorf("target %q: unknown scheme %q: use %s or %s (or -- COMMAND for exec)", target, scheme, strings.Join(schemeNames[:last], ", "), schemeNames[last])
	case !strings.HasPrefix(rest, "//"):
		return "", fmt.Errorf("target %q: write %s://…", target, scheme)
	}
	return kind, nil
}

// Unfit returns the flags the user gave that do not apply to kind.
func (o Options) Unfit(kind string) []string {
	var out []string
	for _, name := range o.Given() {
		if !slices.Contains(KindsOf(name), kind) {
			out = append(out, "--"+name)
		}
	}
	return out
}

// Probe is what a target builds: a check of some kind that measures what it
// sees and says what it is. Close releases what it keeps between runs (a
// dependency's connection); whoever built it calls Close when done with it.
type Probe interface {
	health.Measurer
	Check(ctx context.Context) error
	Kind() string   // http, tcp, exec, …
	String() string // the target, as given
	Close() error
}

var _ Probe = (*probe.Prober)(nil)

// Build makes the probe for a URL target.
func Build(target string, o Options) (Probe, error) {
	kind, err := KindOf(target)
	if err != nil {
		return nil, err
	}
	switch kind {
	case "k8s":
		return buildKube(target, o)
	case "postgres", "redis", "amqp", "nats":
		return buildDep(kind, target)
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", target, err)
	}
	tlsOptions := probe.TLSOptions{CAFile: o.CAFile, CertFile: o.CertFile, KeyFile: o.KeyFile,
		ServerName: o.ServerName, InsecureSkipVerify: o.Insecure}
	switch kind {
	case "http":
		header, err := parseHeaders(o.Header)
		if err != nil {
			return nil, err
		}
		return built(probe.HTTP(probe.HTTPSpec{URL: target, Method: o.Method, Header: header, Status: o.Status,
			Body: o.Body, NotBody: o.NotBody, TLS: tlsOptions}))
	case "tcp":
		if err := hostPortOnly(target, u); err != nil {
			return nil, err
		}
		send, err := unescape("--send", o.Send)
		if err != nil {
			return nil, err
		}
		expect, err := unescape("--expect", o.Expect)
		if err != nil {
			return nil, err
		}
		return built(probe.TCP(probe.TCPSpec{Address: u.Host, Send: send, Expect: expect}))
	case "tls":
		if err := hostPortOnly(target, u); err != nil {
			return nil, err
		}
		return built(probe.TLS(probe.TLSSpec{Address: u.Host, MinValidity: o.MinValidity, TLS: tlsOptions}))
	case "file":
		switch {
		case u.Host != "" && u.Host != "localhost":
			return nil, fmt.Errorf("target %q: a file URL names a local path: file:///path (three slashes)", target)
		case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(target, "?") || strings.HasSuffix(target, "#"):
			return nil, fmt.Errorf("target %q: a ? or # in a path must be written %%3F or %%23", target)
		case u.Path == "":
			return nil, fmt.Errorf("target %q has no path", target)
		}
		return built(probe.File(probe.FileSpec{Path: u.Path, NonEmpty: o.NonEmpty, Regular: o.Regular,
			MaxAge: o.MaxAge, Content: o.Content}))
	case "grpc":
		p, err := grpchealth.GRPC(grpchealth.GRPCSpec{URL: target, TLS: tlsOptions})
		if err != nil {
			return nil, err
		}
		return p, nil
	case "dns":
		// RFC 4501: dns://[server[:port]/]name[?type=TYPE]
		name, server := u.Host, ""
		if p := strings.TrimPrefix(u.Path, "/"); p != "" {
			name, server = p, u.Host
		}
		typ := o.Type
		if q := u.Query().Get("type"); q != "" {
			if typ != "" && !strings.EqualFold(typ, q) {
				return nil, fmt.Errorf("target %q asks for type %s, --type for %s", target, q, typ)
			}
			typ = q
		}
		return built(probe.DNS(probe.DNSSpec{Name: name, Type: strings.ToUpper(typ), Expect: o.Answer, Server: server}))
	}
	return nil, fmt.Errorf("target %q: no kind %q", target, kind)
}

// BuildExec makes the probe for a command line.
func BuildExec(argv []string, o Options) (Probe, error) {
	return built(probe.Exec(probe.ExecSpec{Command: argv, Env: o.Env, Dir: o.Dir}))
}

func hostPortOnly(target string, u *url.URL) error {
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("target %q: want %s://HOST:PORT", target, u.Scheme)
	}
	return nil
}

func parseHeaders(lines []string) (http.Header, error) {
	h := http.Header{}
	for _, l := range lines {
		name, value, ok := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("--header %q: want \"Name: value\"", l)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

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

// built is a kind's constructor's answer as a Probe: no probe with an error.
func built(p *probe.Prober, err error) (Probe, error) {
	if err != nil {
		return nil, err
	}
	return p, nil
}

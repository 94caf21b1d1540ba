package config

import (
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/hooks"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/redact"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/yamlnode"
	"github.com/vitals-dev/vitals/health"
)

// maxRetries bounds a webhook's retries: with the longest backoff, ten
// retries already keep one event for minutes, and the events behind it wait.
const maxRetries = 10

// hooks reads the hooks: list, in the file's order, each with its defaults
// filled in.
func (d *decoder) hooks(n ast.Node) []hooks.Spec {
	seq, ok := yamlnode.Unwrap(n).(*ast.SequenceNode)
	if !ok {
		d.errorf(n, "hooks", "want a list of hooks, each with on: and exec: or webhook:, got %s", yamlnode.Describe(n))
		return nil
	}
	var out []hooks.Spec
	named := map[string]string{} // a hook's name: the path of the first hook with it
	for i, item := range seq.Values {
		path := fmt.Sprintf("hooks[%d]", i)
		s, nameNode, ok := d.hook(item, path)
		s = s.WithDefaults(i + 1)
		if first, taken := named[s.Name]; taken {
			at, where := nameNode, path+".name"
			if at == nil {
				at, where = item, path
			}
			d.errorf(at, where, "hook name %q is taken by %s: give each hook a name of its own", s.Name, first)
			ok = false
		} else if health.ValidName(s.Name) {
			named[s.Name] = path
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// hook reads one hook: its name, its event types, and exactly one of exec
// and webhook. nameNode is its name's node, if it has one.
func (d *decoder) hook(n ast.Node, path string) (s hooks.Spec, nameNode ast.Node, ok bool) {
	before := len(d.errors)
	var onNode, actionNode ast.Node
	var action string
	onErrors := false
	actionField := func(name string, read func(d *decoder, n ast.Node, path string)) field {
		return func(d *decoder, n ast.Node, path string) {
			if action != "" {
				d.errorf(n, path, "a hook has one of exec and webhook, and this one has %s already", action)
				return
			}
			action, actionNode = name, n
			read(d, n, path)
		}
	}
	if !d.fields(n, path, map[string]field{
		"name": func(d *decoder, n ast.Node, path string) {
			nameNode = n
			if name, ok := d.scalar(n, path); ok {
				if !health.ValidName(name) {
					d.errorf(n, path, "a hook name is lower case letters, digits and - _ . inside, at most 63 characters")
				}
				s.Name = name
			}
		},
		"on": func(d *decoder, n ast.Node, path string) {
			onNode = n
			mark := len(d.errors)
			s.On = d.eventTypes(n, path)
			onErrors = len(d.errors) > mark
		},
		"exec": actionField("exec", func(d *decoder, n ast.Node, path string) {
			s.Exec = d.execHook(n, path)
		}),
		"webhook": actionField("webhook", func(d *decoder, n ast.Node, path string) {
			s.Webhook = d.webhookHook(n, path)
		}),
	}) {
		return s, nil, false
	}
	switch {
	case onNode == nil:
		d.errorf(n, path, "no on: give the event types the hook runs for, among %s", eventTypeList())
	case len(s.On) == 0 && !onErrors:
		d.errorf(onNode, path+".on", "empty: give the event types the hook runs for, among %s", eventTypeList())
	}
	if actionNode == nil {
		d.errorf(n, path, "nothing to do: give exec (a command) or webhook (a URL)")
	}
	return s, nameNode, len(d.errors) == before
}

// eventTypes reads the event types of a hook's on: a list, or one.
func (d *decoder) eventTypes(n ast.Node, path string) []health.EventType {
	nodes := []ast.Node{n}
	paths := []string{path}
	if seq, ok := yamlnode.Unwrap(n).(*ast.SequenceNode); ok {
		nodes, paths = seq.Values, make([]string, len(seq.Values))
		for i := range seq.Values {
			paths[i] = fmt.Sprintf("%s[%d]", path, i)
		}
	}
	var out []health.EventType
	seen := map[health.EventType]bool{}
	for i, v := range nodes {
		name, ok := d.scalar(v, paths[i])
		if !ok {
			continue
		}
		t := health.EventType(name)
		switch {
		case !knownEventType(t):
			d.errorf(v, paths[i], "%q is not an event type: want one of %s", name, eventTypeList())
		case seen[t]:
			d.errorf(v, paths[i], "%q is given twice", name)
		default:
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func knownEventType(t health.EventType) bool {
	for _, k := range hooks.EventTypes {
		if t == k {
			return true
		}
	}
	return false
}

func eventTypeList() string {
	names := make([]string, len(hooks.EventTypes))
	for i, t := range hooks.EventTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// execHook reads a hook's exec: the command as a list of words, or a mapping
// of command and timeout.
func (d *decoder) execHook(n ast.Node, path string) *hooks.ExecSpec {
	e := &hooks.ExecSpec{}
	if _, ok := yamlnode.Unwrap(n).(*ast.MappingNode); !ok {
		mark := len(d.errors)
		argv(&e.Command)(d, n, path)
		if len(d.errors) == mark {
			d.command(n, path, e.Command)
		}
		return e
	}
	given := false
	d.fields(n, path, map[string]field{
		"command": func(d *decoder, n ast.Node, path string) {
			given = true
			mark := len(d.errors)
			argv(&e.Command)(d, n, path)
			if len(d.errors) == mark {
				d.command(n, path, e.Command)
			}
		},
		"timeout": positive(&e.Timeout, "a timeout"),
	})
	if !given {
		d.errorf(n, path, "no command: give the command and its arguments as a list")
	}
	return e
}

// command checks that a command can be run: it has a name, found in $PATH
// when it has no slash, as exec.Command looks for it when the hook runs.
func (d *decoder) command(n ast.Node, path string, command []string) {
	if len(command) == 0 || command[0] == "" {
		d.errorf(n, path, "no command: give the command and its arguments as a list")
		return
	}
	name := command[0]
	if strings.Contains(name, "/") {
		return
	}
	found, err := exec.LookPath(name)
	switch {
	case errors.Is(err, exec.ErrNotFound):
		d.errorf(n, path, "command %q not found in $PATH", name)
	case errors.Is(err, exec.ErrDot):
		d.errorf(n, path, "command %q is found only through a relative directory in $PATH (as %s); give its absolute path", name, found)
	case err != nil:
		d.errorf(n, path, "command %q: %v", name, err)
	}
}

// webhookHook reads a hook's webhook: block.
func (d *decoder) webhookHook(n ast.Node, path string) *hooks.WebhookSpec {
	w := &hooks.WebhookSpec{}
	var urlNode, methodNode, backoffNode ast.Node
	retries := -1
	if !d.fields(n, path, map[string]field{
		"url": func(d *decoder, n ast.Node, path string) {
			urlNode = n
			str(&w.URL)(d, n, path)
		},
		"method": func(d *decoder, n ast.Node, path string) {
			methodNode = n
			str(&w.Method)(d, n, path)
		},
		"headers": func(d *decoder, n ast.Node, path string) {
			stringMap(&w.Header)(d, n, path)
			d.headers(n, path, w.Header)
		},
		"timeout": positive(&w.Timeout, "a timeout"),
		"retries": func(d *decoder, n ast.Node, path string) {
			s, ok := d.scalar(n, path)
			if !ok {
				return
			}
			var v int64
			switch _, err := fmt.Sscanf(s, "%d", &v); {
			case err != nil || fmt.Sprint(v) != s:
				d.errorf(n, path, "want a whole number, got %q", s)
			case v < 0:
				d.errorf(n, path, "%d is negative: give 0 for none", v)
			case v > maxRetries:
				d.errorf(n, path, "%d is more than %d: an event that fails for longer holds up the ones behind it", v, maxRetries)
			default:
				retries = int(v)
			}
		},
		"backoff": func(d *decoder, n ast.Node, path string) {
			backoffNode = n
			d.fields(n, path, map[string]field{
				"initial": positive(&w.BackoffInitial, "a delay"),
				"max":     positive(&w.BackoffMax, "a delay"),
			})
		},
	}) {
		return w
	}
	if retries >= 0 {
		w.Attempts = retries + 1
	}
	switch u, err := url.Parse(w.URL); {
	case urlNode == nil:
		d.errorf(n, path, "url is required")
	case w.URL == "":
	case err != nil:
		d.errorf(urlNode, path+".url", "%q is not a URL: %v", w.URL, errors.Unwrap(err))
	case u.Scheme != "http" && u.Scheme != "https":
		d.errorf(urlNode, path+".url", "%q: want an http:// or https:// URL", w.URL)
	case u.Host == "":
		d.errorf(urlNode, path+".url", "%q has no host", w.URL)
	}
	if methodNode != nil && w.Method != "" && strings.Trim(w.Method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		d.errorf(methodNode, path+".method", "want an HTTP method in capitals, such as POST or PUT, got %q", w.Method)
	}
	// One of the two given: the other's default, moved to make room for it.
	switch {
	case w.BackoffInitial == 0 && w.BackoffMax > 0:
		w.BackoffInitial = min(hooks.DefaultBackoffInitial, w.BackoffMax)
	case w.BackoffMax == 0 && w.BackoffInitial > 0:
		w.BackoffMax = max(hooks.DefaultBackoffMax, w.BackoffInitial)
	case w.BackoffInitial > w.BackoffMax:
		d.errorf(backoffNode, path+".backoff", "initial %v is longer than max %v", w.BackoffInitial, w.BackoffMax)
	}
	return w
}

// headers checks a webhook's headers, and records the secrets they carry
// (see redact.Header), whole and their last word (the token after "Bearer "),
// so that Redact hides them wherever they show, as it hides the values of
// secret variables. Values are never quoted in errors.
func (d *decoder) headers(n ast.Node, path string, header map[string][]string) {
	m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
	if !ok {
		return // stringMap said so
	}
	for _, kv := range m.Values {
		name := yamlnode.KeyName(kv.Key)
		if !headerName(name) {
			d.errorf(kv.Key, join(path, name), "%q is not a header name", name)
			continue
		}
		for _, v := range header[name] {
			if strings.ContainsAny(v, "\r\n\x00") {
				d.errorf(kv.Value, join(path, name), "the value has a line break or a NUL, which a header cannot carry")
			}
			d.secrets = append(d.secrets, redact.Header(name, v)...)
		}
	}
}

// headerName reports whether s is an HTTP header name: a token.
func headerName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// positive is duration for a value that must be more than 0; what names it
// in the error.
func positive(dst *time.Duration, what string) field {
	return func(d *decoder, n ast.Node, path string) {
		mark := len(d.errors)
		duration(dst)(d, n, path)
		if len(d.errors) == mark && *dst == 0 {
			d.errorf(n, path, "0s: give %s of more than 0", what)
		}
	}
}

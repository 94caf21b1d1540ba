package config

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/apisocket"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/yamlnode"
	"github.com/vitals-dev/vitals/health"
)

// Hook is one hook of the hooks: list: the events it is on, and what
// delivers them, exactly one of Exec, Webhook and PebbleNotice. The file's
// come with every default filled in (WithDefaults). Package hooks delivers
// them as they are; its package doc says what delivering means for each.
type Hook struct {
	// Name says which hook a log line, a status or a metric is about.
	// Default "hook-N", N being the hook's position in the list, from 1.
	Name string
	// On is the event types delivered, among HookEventTypes; the others are
	// skipped. Required but for a PebbleNotice, whose default is
	// DefaultPebbleNoticeOn.
	On           []health.EventType
	Exec         *ExecHook
	Webhook      *WebhookHook
	PebbleNotice *PebbleNoticeHook
}

// ExecHook is a hook that runs a command for each event.
type ExecHook struct {
	// Command is the program and its arguments: there is no shell (for one,
	// [sh, -c, "…"]). A name without a slash is found in $PATH when the
	// file is read.
	Command []string
	// Timeout bounds each run: then the command's process group is killed.
	// Default DefaultHookExecTimeout.
	Timeout time.Duration
}

// HookRetry is how a hook that sends a request for each event (a webhook,
// a Pebble notice) tries it again.
type HookRetry struct {
	// Timeout bounds each attempt, from dialling to the end of the answer.
	// Default DefaultHookRequestTimeout.
	Timeout time.Duration
	// Attempts is how many requests an event gets at most, the first one
	// included (the file's retries plus 1). Default DefaultHookAttempts.
	Attempts int
	// BackoffInitial and BackoffMax bound the waits between attempts.
	// Defaults DefaultHookBackoffInitial and DefaultHookBackoffMax; when the
	// file gives one, the other moves to make room for it.
	BackoffInitial, BackoffMax time.Duration
}

// WebhookHook is a hook that sends each event's JSON in an HTTP request.
type WebhookHook struct {
	URL string // http or https
	// Method is an HTTP method in capitals. Default DefaultHookMethod.
	Method string
	// Header is sent with every request, after Content-Type
	// (application/json) and User-Agent (vitals/VERSION), which it may
	// replace. Its values are secrets, never logged or printed.
	Header map[string][]string
	HookRetry
}

// PebbleNoticeHook is a hook that records each event as a custom notice of
// a Pebble, as `pebble notify` does.
type PebbleNoticeHook struct {
	// Socket is the path of Pebble's API socket. Default where the pebble
	// command looks for it: $PEBBLE_SOCKET, else $PEBBLE/.pebble.socket,
	// else DefaultPebbleSocket (the file's environment decides, so it is
	// filled in as the file is read, and WithDefaults leaves it).
	Socket string
	// RepeatAfter is Pebble's repeat-after: an event of the same type less
	// than this long after its notice last repeated counts an occurrence
	// and replaces its data without waking anyone. 0, the default: every
	// event repeats the notice.
	RepeatAfter time.Duration
	HookRetry
}

// The defaults of a hook's fields, which the file's hooks get filled in, and
// package hooks gives a zero field too (WithDefaults).
const (
	// DefaultHookExecTimeout leaves a command time to call out over the
	// network once or twice (a notification, a kubectl) without piling up
	// runs.
	DefaultHookExecTimeout = 10 * time.Second
	// DefaultHookRequestTimeout is long for a neighbour's answer, and short
	// enough that a few attempts fit well within a minute.
	DefaultHookRequestTimeout = 5 * time.Second
	// DefaultHookMethod is what webhooks expect.
	DefaultHookMethod = "POST"
	// DefaultHookAttempts is a first try and 3 retries: with the default
	// backoff, 3.5s of waiting in all, which rides out a restart of the
	// receiver.
	DefaultHookAttempts = 4
	// DefaultHookBackoffInitial and DefaultHookBackoffMax: the first retry
	// comes quickly, and no wait is longer than the receiver's likely
	// restart.
	DefaultHookBackoffInitial = 500 * time.Millisecond
	DefaultHookBackoffMax     = 10 * time.Second
	// DefaultPebbleSocket is Pebble's socket when neither $PEBBLE_SOCKET
	// nor $PEBBLE says where it is: in Pebble's default directory.
	DefaultPebbleSocket = "/var/lib/pebble/default/.pebble.socket"
)

// DefaultPebbleNoticeOn is the event types a pebble-notice hook is on when
// it has no on: the changes a charm acts on, and not the starts, stops and
// resets that come with them; and the workload's own notices (vitals
// notify), which it records to be acted on.
var DefaultPebbleNoticeOn = []health.EventType{
	health.EventCheckFailed, health.EventCheckPassed,
	health.EventLevelFailed, health.EventLevelPassed,
	health.EventServiceExited, health.EventNotice,
}

// HookEventTypes is every event type a hook may be on, in the order the
// file's errors list them: every type the agent emits. check-stopped and
// check-started come from the API's POST /v1/checks/stop and
// /v1/checks/start; check-added, check-removed, config-reloaded and
// config-rejected from a reload of the file.
var HookEventTypes = []health.EventType{
	health.EventCheckPassed, health.EventCheckWarned, health.EventCheckFailed,
	health.EventLevelPassed, health.EventLevelFailed,
	health.EventServiceStarted, health.EventServiceExited,
	health.EventStopping, health.EventChecksReset,
	health.EventCheckStopped, health.EventCheckStarted,
	health.EventNotice,
	health.EventCheckAdded, health.EventCheckRemoved,
	health.EventConfigReloaded, health.EventConfigRejected,
}

// WithDefaults returns h with its zero fields set to their defaults; n is
// its position in the list, from 1, which names a hook without a name. The
// file's hooks have them already; package hooks applies it to what it is
// given, so that a zero field means what it means in the file. h's Exec,
// Webhook and PebbleNotice are copied, not changed.
func (h Hook) WithDefaults(n int) Hook {
	if h.Name == "" {
		h.Name = fmt.Sprintf("hook-%d", n)
	}
	if e := h.Exec; e != nil {
		e2 := *e
		e2.Timeout = cmp.Or(e2.Timeout, DefaultHookExecTimeout)
		h.Exec = &e2
	}
	if w := h.Webhook; w != nil {
		w2 := *w
		w2.Method = cmp.Or(w2.Method, DefaultHookMethod)
		w2.HookRetry = w2.HookRetry.withDefaults()
		h.Webhook = &w2
	}
	if p := h.PebbleNotice; p != nil {
		p2 := *p
		p2.HookRetry = p2.HookRetry.withDefaults()
		h.PebbleNotice = &p2
		if len(h.On) == 0 {
			h.On = slices.Clone(DefaultPebbleNoticeOn)
		}
	}
	return h
}

// withDefaults returns r with its zero fields set to their defaults.
func (r HookRetry) withDefaults() HookRetry {
	r.Timeout = cmp.Or(r.Timeout, DefaultHookRequestTimeout)
	r.Attempts = cmp.Or(r.Attempts, DefaultHookAttempts)
	r.BackoffInitial = cmp.Or(r.BackoffInitial, DefaultHookBackoffInitial)
	r.BackoffMax = cmp.Or(r.BackoffMax, max(DefaultHookBackoffMax, r.BackoffInitial))
	return r
}

// maxRetries bounds a hook's retries: with the longest backoff, ten
// retries already keep one event for minutes, and the events behind it wait.
const maxRetries = 10

// hooks reads the hooks: list, in the file's order, each with its defaults
// filled in.
func (d *Decoder) hooks(n ast.Node) []Hook {
	seq, ok := yamlnode.Unwrap(n).(*ast.SequenceNode)
	if !ok {
		d.Errorf(n, "hooks", "want a list of hooks, each with on: and one of exec:, webhook: and pebble-notice:, got %s", yamlnode.Describe(n))
		return nil
	}
	var out []Hook
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
			d.Errorf(at, where, "hook name %q is taken by %s: give each hook a name of its own", s.Name, first)
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

// hook reads one hook: its name, its event types, and exactly one of exec,
// webhook and pebble-notice. nameNode is its name's node, if it has one.
func (d *Decoder) hook(n ast.Node, path string) (s Hook, nameNode ast.Node, ok bool) {
	before := d.Failures()
	var action string
	onErrors := false
	given, ok := d.Fields(n, path, hookFields(&s, &action, &onErrors))
	if !ok {
		return s, nil, false
	}
	switch {
	case given["on"] == nil && action == "pebble-notice":
		// WithDefaults gives it DefaultPebbleNoticeOn.
	case given["on"] == nil:
		d.Errorf(n, path, "no on: give the event types the hook runs for, among %s", eventTypeList())
	case len(s.On) == 0 && !onErrors:
		d.Errorf(given["on"], path+".on", "empty: give the event types the hook runs for, among %s", eventTypeList())
	}
	if action == "" {
		d.Errorf(n, path, "nothing to do: give exec (a command), webhook (a URL) or pebble-notice (Pebble's socket)")
	}
	return s, given["name"], d.Failures() == before
}

// hookFields are the fields of a hook, read into s; action is the one of
// exec, webhook and pebble-notice given, onErrors whether on: had errors.
func hookFields(s *Hook, action *string, onErrors *bool) []Field {
	actionValue := func(name string, schema Schema, read func(d *Decoder, n ast.Node, path string)) Value {
		return Value{"mapping", func(d *Decoder, n ast.Node, path string) {
			if *action != "" {
				d.Errorf(n, path, "a hook has one of exec, webhook and pebble-notice, and this one has %s already", *action)
				return
			}
			*action = name
			read(d, n, path)
		}, schema}
	}
	return []Field{
		{Key: "name", Value: Value{"string", func(d *Decoder, n ast.Node, path string) {
			if name, ok := d.scalar(n, path); ok {
				if !health.ValidName(name) {
					d.Errorf(n, path, "a hook name is lower case letters, digits and - _ . inside, at most 63 characters")
				}
				s.Name = name
			}
		}, expandable(nameSchema)}, Default: "hook-N", Described: true, Doc: "Names the hook in logs, metrics and the API; N is its place in the list, from 1."},
		{Key: "on", Value: Value{"list of strings", func(d *Decoder, n ast.Node, path string) {
			mark := d.Failures()
			s.On = d.eventTypes(n, path)
			*onErrors = d.Failures() > mark
		}, eventTypesSchema()}, Doc: "The event types the hook runs for, among " + eventTypeList() + ". Required by exec and webhook; a pebble-notice's default is " + eventTypeNames(DefaultPebbleNoticeOn) + "."},
		{Key: "exec", Value: actionValue("exec", Schema{"anyOf": []Schema{argvSchema, Ref("hooks[].exec")}}, func(d *Decoder, n ast.Node, path string) {
			s.Exec = d.execHook(n, path)
		}), Doc: "Runs a command for each event, with the event's JSON on stdin: the command as a list of words, or a mapping of command and timeout (below). One of exec, webhook and pebble-notice."},
		{Key: "webhook", Value: actionValue("webhook", Ref("hooks[].webhook"), func(d *Decoder, n ast.Node, path string) {
			s.Webhook = d.webhookHook(n, path)
		}), Doc: "Sends each event's JSON in an HTTP request (below). One of exec, webhook and pebble-notice."},
		{Key: "pebble-notice", Value: actionValue("pebble-notice", Ref("hooks[].pebble-notice"), func(d *Decoder, n ast.Node, path string) {
			s.PebbleNotice = d.pebbleNoticeHook(n, path)
		}), Doc: "Records each event as a custom notice of a Pebble, key vitals.dev/TYPE, the event's fields its data: what wakes a Juju charm (below; {} for the defaults). One of exec, webhook and pebble-notice."},
	}
}

// eventTypes reads the event types of a hook's on: a list, or one.
func (d *Decoder) eventTypes(n ast.Node, path string) []health.EventType {
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
			d.Errorf(v, paths[i], "%q is not an event type: want one of %s", name, eventTypeList())
		case seen[t]:
			d.Errorf(v, paths[i], "%q is given twice", name)
		default:
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func knownEventType(t health.EventType) bool {
	for _, k := range HookEventTypes {
		if t == k {
			return true
		}
	}
	return false
}

// eventTypesSchema is what eventTypes reads: a list of HookEventTypes, each
// at most once, or one.
func eventTypesSchema() Schema {
	names := make([]string, len(HookEventTypes))
	for i, t := range HookEventTypes {
		names[i] = string(t)
	}
	return Schema{"anyOf": []Schema{{"enum": names}, expansion, {"type": "array", "items": enum(names...), "minItems": 1, "uniqueItems": true}}}
}

func eventTypeList() string { return eventTypeNames(HookEventTypes) }

// eventTypeNames is types as a sentence lists them.
func eventTypeNames(types []health.EventType) string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// execHook reads a hook's exec: the command as a list of words, or a mapping
// of command and timeout.
func (d *Decoder) execHook(n ast.Node, path string) *ExecHook {
	e := &ExecHook{}
	if _, ok := yamlnode.Unwrap(n).(*ast.MappingNode); !ok {
		commandValue(&e.Command).Read(d, n, path)
		return e
	}
	if given, _ := d.Fields(n, path, execHookFields(e)); given["command"] == nil {
		d.Errorf(n, path, "no command: give the command and its arguments as a list")
	}
	return e
}

// execHookFields are the fields of a hook's exec: mapping, read into e.
func execHookFields(e *ExecHook) []Field {
	return []Field{
		{Key: "command", Value: commandValue(&e.Command), Required: true,
			Doc: "Required: the program and its arguments, with no shell (for one, [sh, -c, \"…\"]); a name without a slash is found in $PATH."},
		{Key: "timeout", Value: positive(&e.Timeout, "a timeout"), Default: DefaultHookExecTimeout.String(),
			Doc: "Bounds each run; then the command's process group is killed. Time to call out over the network once or twice without piling up runs."},
	}
}

// commandValue is Argv for a command that must be found (see command).
func commandValue(dst *[]string) Value {
	return Value{"list of strings", func(d *Decoder, n ast.Node, path string) {
		mark := d.Failures()
		Argv(dst).Read(d, n, path)
		if d.Failures() == mark {
			d.command(n, path, *dst)
		}
	}, argvSchema}
}

// command checks that a command can be run: it has a name, found in $PATH
// when it has no slash, as exec.Command looks for it when the hook runs
// (unless the file is checked offline, for a machine that may have it).
func (d *Decoder) command(n ast.Node, path string, command []string) {
	if len(command) == 0 || command[0] == "" {
		d.Errorf(n, path, "no command: give the command and its arguments as a list")
		return
	}
	name := command[0]
	if strings.Contains(name, "/") || d.offline {
		return
	}
	found, err := exec.LookPath(name)
	switch {
	case errors.Is(err, exec.ErrNotFound):
		d.Errorf(n, path, "command %q not found in $PATH", name)
	case errors.Is(err, exec.ErrDot):
		d.Errorf(n, path, "command %q is found only through a relative directory in $PATH (as %s); give its absolute path", name, found)
	case err != nil:
		d.Errorf(n, path, "command %q: %v", name, err)
	}
}

// webhookHook reads a hook's webhook: block.
func (d *Decoder) webhookHook(n ast.Node, path string) *WebhookHook {
	w := &WebhookHook{}
	retries := -1
	given, ok := d.Fields(n, path, webhookFields(w, &retries))
	if !ok {
		return w
	}
	urlNode, methodNode := given["url"], given["method"]
	switch u, err := url.Parse(w.URL); {
	case urlNode == nil:
		d.Errorf(n, path, "url is required")
	case w.URL == "":
	case err != nil:
		d.Errorf(urlNode, path+".url", "%q is not a URL: %v", w.URL, errors.Unwrap(err))
	case u.Scheme != "http" && u.Scheme != "https":
		d.Errorf(urlNode, path+".url", "%q: want an http:// or https:// URL", w.URL)
	case u.Host == "":
		d.Errorf(urlNode, path+".url", "%q has no host", w.URL)
	}
	if methodNode != nil && w.Method != "" && strings.Trim(w.Method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		d.Errorf(methodNode, path+".method", "want an HTTP method in capitals, such as POST or PUT, got %q", w.Method)
	}
	d.hookRetry(&w.HookRetry, retries, given["backoff"], path)
	return w
}

// webhookFields are the fields of a hook's webhook: block, read into w, its
// retries into retries.
func webhookFields(w *WebhookHook, retries *int) []Field {
	return append([]Field{
		{Key: "url", Value: String(&w.URL), Required: true, Doc: "Required: an http:// or https:// URL."},
		{Key: "method", Value: String(&w.Method), Default: DefaultHookMethod, Doc: "An HTTP method, in capitals."},
		{Key: "headers", Value: Headers(&w.Header), Doc: "Sent with every request; their values are secrets, never logged or printed."},
	}, retryFields(&w.HookRetry, retries, "hooks[].webhook.backoff", "the receiver")...)
}

// pebbleNoticeHook reads a hook's pebble-notice: block; with no socket:,
// Pebble's socket is where the pebble command finds it, by the file's
// environment.
func (d *Decoder) pebbleNoticeHook(n ast.Node, path string) *PebbleNoticeHook {
	p := &PebbleNoticeHook{}
	retries := -1
	given, ok := d.Fields(n, path, pebbleNoticeFields(p, &retries))
	if !ok {
		return p
	}
	if given["socket"] == nil {
		p.Socket = d.pebbleSocket()
	}
	d.hookRetry(&p.HookRetry, retries, given["backoff"], path)
	return p
}

// pebbleSocket is where the pebble command finds Pebble's socket, by the
// file's environment: $PEBBLE_SOCKET, else $PEBBLE/.pebble.socket, else
// DefaultPebbleSocket. Pebble's services get Pebble's environment, so that
// a vitals that Pebble runs finds the Pebble that runs it.
func (d *Decoder) pebbleSocket() string {
	if s, ok := d.env("PEBBLE_SOCKET"); ok && s != "" {
		return s
	}
	if dir, ok := d.env("PEBBLE"); ok && dir != "" {
		return filepath.Join(dir, ".pebble.socket")
	}
	return DefaultPebbleSocket
}

// pebbleNoticeFields are the fields of a hook's pebble-notice: block, read
// into p, its retries into retries.
func pebbleNoticeFields(p *PebbleNoticeHook, retries *int) []Field {
	return append([]Field{
		{Key: "socket", Value: Value{"string", func(d *Decoder, n ast.Node, path string) {
			mark := d.Failures()
			CString(&p.Socket).Read(d, n, path)
			switch {
			case d.Failures() > mark:
			case p.Socket == "":
				d.Errorf(n, path, "empty: give the path of Pebble's socket, or leave the field out for $PEBBLE_SOCKET's")
			case strings.Contains(p.Socket, "://"):
				d.Errorf(n, path, "%q: give the path of Pebble's unix socket; Pebble takes notices there only, where it knows the caller's user id", p.Socket)
			default:
				if err := apisocket.Reachable(p.Socket); err != nil {
					d.Errorf(n, path, "%v", err)
				}
			}
		}, scalar}, Default: "$PEBBLE_SOCKET, $PEBBLE/.pebble.socket or " + DefaultPebbleSocket, Described: true,
			Doc: "Pebble's API socket, where the pebble command looks for it: $PEBBLE_SOCKET, else $PEBBLE/.pebble.socket, else Pebble's default; a vitals that Pebble runs gets Pebble's environment."},
		{Key: "repeat-after", Value: Duration(&p.RepeatAfter), Default: "0s",
			Doc: "Pebble's repeat-after: an event less than this long after its notice last repeated counts as an occurrence and replaces its data, but does not repeat the notice, so the charm is not woken again; 0: every event repeats it."},
	}, retryFields(&p.HookRetry, retries, "hooks[].pebble-notice.backoff", "Pebble")...)
}

// retryFields are the fields of a hook's timeout, retries and backoff, read
// into r, its retries into retries; backoff is the path of its backoff's
// section, receiver what receives the requests.
func retryFields(r *HookRetry, retries *int, backoff, receiver string) []Field {
	return []Field{
		{Key: "timeout", Value: positive(&r.Timeout, "a timeout"), Default: DefaultHookRequestTimeout.String(),
			Doc: "Bounds each attempt, from dialling to the end of the answer."},
		{Key: "retries", Value: Value{"integer", func(d *Decoder, n ast.Node, path string) {
			s, ok := d.scalar(n, path)
			if !ok {
				return
			}
			var v int64
			switch _, err := fmt.Sscanf(s, "%d", &v); {
			case err != nil || fmt.Sprint(v) != s:
				d.Errorf(n, path, "want a whole number, got %q", s)
			case v < 0:
				d.Errorf(n, path, "%d is negative: give 0 for none", v)
			case v > maxRetries:
				d.Errorf(n, path, "%d is more than %d: an event that fails for longer holds up the ones behind it", v, maxRetries)
			default:
				*retries = int(v)
			}
		}, wholeNumber(0, maxRetries)}, Default: fmt.Sprint(DefaultHookAttempts - 1),
			Doc: fmt.Sprintf("How often a network error, a timeout, a 5xx or a 429 is tried again, at most %d: 3.5s of waiting in all with the default backoff, which rides out a restart of %s.", maxRetries, receiver)},
		{Key: "backoff", Value: Value{"mapping", func(d *Decoder, n ast.Node, path string) {
			d.Fields(n, path, hookBackoffFields(r, receiver))
		}, Ref(backoff)}, Doc: "The waits between attempts: initial, doubled each time up to max (below)."},
	}
}

// hookRetry finishes a hook's retry fields once read: retries, when given
// (0 or more), as attempts, and the default of the one of the backoff's
// initial and max that the file did not give, moved to make room for the
// other.
func (d *Decoder) hookRetry(r *HookRetry, retries int, backoffNode ast.Node, path string) {
	if retries >= 0 {
		r.Attempts = retries + 1
	}
	switch {
	case r.BackoffInitial == 0 && r.BackoffMax > 0:
		r.BackoffInitial = min(DefaultHookBackoffInitial, r.BackoffMax)
	case r.BackoffMax == 0 && r.BackoffInitial > 0:
		r.BackoffMax = max(DefaultHookBackoffMax, r.BackoffInitial)
	case r.BackoffInitial > r.BackoffMax:
		d.Errorf(backoffNode, path+".backoff", "initial %v is longer than max %v", r.BackoffInitial, r.BackoffMax)
	}
}

// hookBackoffFields are the fields of a hook's backoff, read into r;
// receiver is what receives the requests.
func hookBackoffFields(r *HookRetry, receiver string) []Field {
	return []Field{
		{Key: "initial", Value: positive(&r.BackoffInitial, "a delay"), Default: DefaultHookBackoffInitial.String(),
			Doc: "The first wait: the first retry comes quickly."},
		{Key: "max", Value: positive(&r.BackoffMax, "a delay"), Default: DefaultHookBackoffMax.String(),
			Doc: fmt.Sprintf("The longest wait, no longer than the likely restart of %s; at least initial.", receiver)},
	}
}

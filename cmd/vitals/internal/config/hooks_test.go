package config_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"

	. "github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

const eventTypes = "check-passed, check-warned, check-failed, level-passed, level-failed, service-started, service-exited, stopping, checks-reset, check-stopped, check-started, notice, check-added, check-removed, config-reloaded, config-rejected"

// withHooks is a file with one check and the hooks given, from line 3.
func withHooks(lines ...string) string {
	return y(append([]string{"checks:", "  a: {heartbeat: {ttl: 1s}}"}, lines...)...)
}

func TestBadHooksSayWhatAndWhere(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		want []string
	}{
		{"hooks is a mapping", withHooks(
			"hooks: {on: [stopping], exec: [true]}",
		), []string{
			`vitals.yaml:3:8: hooks: want a list of hooks, each with on: and one of exec:, webhook: and pebble-notice:, got a mapping`,
		}},
		{"a hook is a string", withHooks(
			"hooks:",
			"  - notify",
		), []string{
			`vitals.yaml:4:5: hooks[0]: want a mapping of exec, name, on, pebble-notice, webhook, got "notify"`,
		}},
		{"an unknown field", withHooks(
			"hooks:",
			"  - {on: [stopping], exec: [true], shell: bash}",
		), []string{
			`vitals.yaml:4:36: hooks[0].shell: unknown field "shell" (want exec, name, on, pebble-notice, webhook)`,
		}},
		{"neither on nor anything to do", withHooks(
			"hooks:",
			"  - name: lonely",
		), []string{
			`vitals.yaml:4:9: hooks[0]: no on: give the event types the hook runs for, among ` + eventTypes,
			`vitals.yaml:4:9: hooks[0]: nothing to do: give exec (a command), webhook (a URL) or pebble-notice (Pebble's socket)`,
		}},
		{"on is empty, and the name bad", withHooks(
			"hooks:",
			"  - on: []",
			"    exec: [true]",
			"    name: -x",
		), []string{
			`vitals.yaml:4:9: hooks[0].on: empty: give the event types the hook runs for, among ` + eventTypes,
			`vitals.yaml:6:11: hooks[0].name: a hook name is lower case letters, digits and - _ . inside, at most 63 characters`,
		}},
		{"on names an unknown type, and one twice", withHooks(
			"hooks:",
			"  - exec: [true]",
			"  - on: [check-faild, stopping, stopping]",
			"    exec: [true]",
		), []string{
			`vitals.yaml:4:9: hooks[0]: no on: give the event types the hook runs for, among ` + eventTypes,
			`vitals.yaml:5:10: hooks[1].on[0]: "check-faild" is not an event type: want one of ` + eventTypes,
			`vitals.yaml:5:33: hooks[1].on[2]: "stopping" is given twice`,
		}},
		{"on is one word that is not a type", withHooks(
			"hooks:",
			"  - {on: failed, exec: [true]}",
		), []string{
			`vitals.yaml:4:10: hooks[0].on: "failed" is not an event type: want one of ` + eventTypes,
		}},
		{"exec and webhook", withHooks(
			"hooks:",
			"  - on: [stopping]",
			"    exec: [true]",
			"    webhook: {url: \"http://operator/hook\"}",
		), []string{
			`vitals.yaml:6:14: hooks[0].webhook: a hook has one of exec, webhook and pebble-notice, and this one has exec already`,
		}},
		{"exec as a line for a shell", withHooks(
			"hooks:",
			"  - on: [stopping]",
			"    exec: notify-charm --now",
		), []string{
			`vitals.yaml:5:11: hooks[0].exec: want a list of words, such as [notify-charm, --now], not "notify-charm --now": no shell splits it (for a shell, [sh, -c, "…"])`,
		}},
		{"exec: a command not found, an empty one, none", withHooks(
			"hooks:",
			"  - {on: [stopping], exec: [no-such-command-of-vitals]}",
			"  - {on: [stopping], exec: []}",
			"  - {on: [stopping], exec: {timeout: 1s}}",
		), []string{
			`vitals.yaml:4:28: hooks[0].exec: command "no-such-command-of-vitals" not found in $PATH`,
			`vitals.yaml:5:28: hooks[1].exec: no command: give the command and its arguments as a list`,
			`vitals.yaml:6:28: hooks[2].exec: no command: give the command and its arguments as a list`,
		}},
		{"exec: a bad timeout, an unknown field", withHooks(
			"hooks:",
			"  - on: [stopping]",
			"    exec: {command: [true], timeout: 0s, env: {A: b}}",
			"  - on: [stopping]",
			"    exec: {command: [true], timeout: 10}",
		), []string{
			`vitals.yaml:5:38: hooks[0].exec.timeout: 0s: give a timeout of more than 0`,
			`vitals.yaml:5:42: hooks[0].exec.env: unknown field "env" (want command, timeout)`,
			`vitals.yaml:7:38: hooks[1].exec.timeout: "10" has no unit: write 10s (or ms, m, h)`,
		}},
		{"webhook without a url", withHooks(
			"hooks:",
			"  - on: [stopping]",
			"    webhook: {method: PUT}",
		), []string{
			`vitals.yaml:5:14: hooks[0].webhook: url is required`,
		}},
		{"webhook urls that are not http", withHooks(
			"hooks:",
			"  - {on: [stopping], webhook: {url: \"ftp://operator/hook\"}}",
			"  - {on: [stopping], webhook: {url: \"http:///hook\"}}",
			"  - {on: [stopping], webhook: {url: \"http://[::1/\"}}",
			"  - {on: [stopping], webhook: {url: \"http://${UNSET_HOST}/\"}}",
		), []string{
			`vitals.yaml:4:37: hooks[0].webhook.url: "ftp://operator/hook": want an http:// or https:// URL`,
			`vitals.yaml:5:37: hooks[1].webhook.url: "http:///hook" has no host`,
			`vitals.yaml:6:37: hooks[2].webhook.url: "http://[::1/" is not a URL: missing ']' in host`,
			`vitals.yaml:7:37: hooks[3].webhook.url: environment variable UNSET_HOST is not set`,
		}},
		{"webhook: bad method, headers, timeout", withHooks(
			"hooks:",
			"  - on: [stopping]",
			"    webhook:",
			"      url: http://operator/hook",
			"      method: post",
			"      headers: {\"Bad Name\": x, X-Ok: \"a\\nb\"}",
			"      timeout: 0s",
			"  - on: [stopping]",
			"    webhook: {url: http://operator/hook, headers: [Authorization]}",
		), []string{
			`vitals.yaml:7:15: hooks[0].webhook.method: want an HTTP method in capitals, such as POST or PUT, got "post"`,
			`vitals.yaml:8:17: hooks[0].webhook.headers.Bad Name: "Bad Name" is not a header name`,
			`vitals.yaml:8:38: hooks[0].webhook.headers.X-Ok: the value has a line break or a NUL, which a header cannot carry`,
			`vitals.yaml:9:16: hooks[0].webhook.timeout: 0s: give a timeout of more than 0`,
			`vitals.yaml:11:51: hooks[1].webhook.headers: want a mapping of names to values, got a list`,
		}},
		{"webhook: bad retries and backoffs", withHooks(
			"hooks:",
			"  - {on: [stopping], webhook: {url: http://o/, retries: -1}}",
			"  - {on: [stopping], webhook: {url: http://o/, retries: 11}}",
			"  - {on: [stopping], webhook: {url: http://o/, retries: three}}",
			"  - {on: [stopping], webhook: {url: http://o/, backoff: {initial: 2s, max: 1s}}}",
			"  - {on: [stopping], webhook: {url: http://o/, backoff: {initial: 0s}}}",
		), []string{
			`vitals.yaml:4:57: hooks[0].webhook.retries: -1 is negative: give 0 for none`,
			`vitals.yaml:5:57: hooks[1].webhook.retries: 11 is more than 10: an event that fails for longer holds up the ones behind it`,
			`vitals.yaml:6:57: hooks[2].webhook.retries: want a whole number, got "three"`,
			`vitals.yaml:7:57: hooks[3].webhook.backoff: initial 2s is longer than max 1s`,
			`vitals.yaml:8:67: hooks[4].webhook.backoff.initial: 0s: give a delay of more than 0`,
		}},
		{"pebble-notice: bad socket, unknown field, bad repeat-after and backoff", withHooks(
			"hooks:",
			"  - pebble-notice: {socket: [/run/pebble.socket]}",
			"  - pebble-notice: {socket: \"\", repeat-after: 1 hour}",
			"  - pebble-notice: {socket: \"http://localhost:4000\", key: example.com/oidc}",
			"  - pebble-notice: {socket: /run/"+strings.Repeat("d", 100)+"/pebble.socket, retries: 11, backoff: {initial: 2s, max: 1s}}",
			"  - on: []",
			"    pebble-notice: /run/pebble.socket",
			"  - on: [stopping]",
			"    pebble-notice: {}",
			"    exec: [true]",
		), []string{
			`vitals.yaml:4:29: hooks[0].pebble-notice.socket: want a single value, got a list`,
			`vitals.yaml:5:29: hooks[1].pebble-notice.socket: empty: give the path of Pebble's socket, or leave the field out for $PEBBLE_SOCKET's`,
			`vitals.yaml:5:47: hooks[1].pebble-notice.repeat-after: "1 hour" is not a duration such as 10s, 500ms or 1m30s`,
			`vitals.yaml:6:29: hooks[2].pebble-notice.socket: "http://localhost:4000": give the path of Pebble's unix socket; Pebble takes notices there only, where it knows the caller's user id`,
			`vitals.yaml:6:54: hooks[2].pebble-notice.key: unknown field "key" (want backoff, repeat-after, retries, socket, timeout)`,
			`vitals.yaml:7:29: hooks[3].pebble-notice.socket: "/run/` + strings.Repeat("d", 100) + `/pebble.socket" is 119 bytes, too long for a unix socket: at most 107`,
			`vitals.yaml:7:159: hooks[3].pebble-notice.retries: 11 is more than 10: an event that fails for longer holds up the ones behind it`,
			`vitals.yaml:7:172: hooks[3].pebble-notice.backoff: initial 2s is longer than max 1s`,
			`vitals.yaml:8:9: hooks[4].on: empty: give the event types the hook runs for, among ` + eventTypes,
			`vitals.yaml:9:20: hooks[4].pebble-notice: want a mapping of backoff, repeat-after, retries, socket, timeout, got "/run/pebble.socket"`,
			`vitals.yaml:12:11: hooks[5].exec: a hook has one of exec, webhook and pebble-notice, and this one has pebble-notice already`,
		}},
		{"names: bad, taken, taken by a default", withHooks(
			"hooks:",
			"  - {name: Notify, on: [stopping], exec: [true]}",
			"  - {name: hook-3, on: [stopping], exec: [true]}",
			"  - {on: [stopping], exec: [true]}",
			"  - {name: hook-3, on: [stopping], exec: [true]}",
		), []string{
			`vitals.yaml:4:12: hooks[0].name: a hook name is lower case letters, digits and - _ . inside, at most 63 characters`,
			`vitals.yaml:6:5: hooks[2]: hook name "hook-3" is taken by hooks[1]: give each hook a name of its own`,
			`vitals.yaml:7:12: hooks[3].name: hook name "hook-3" is taken by hooks[1]: give each hook a name of its own`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.yaml)
			if err == nil {
				t.Fatalf("no error, want:\n%s", strings.Join(tc.want, "\n"))
			}
			if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("errors:\n%s\nwant:\n%s", err, strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestHooksAreReadWithTheirDefaults(t *testing.T) {
	// As Juju sets them in a workload container, with $PEBBLE_SOCKET first.
	env := map[string]string{"HOOK_TOKEN": "tok-hook-123", "OPERATOR": "operator:8080",
		"PEBBLE_SOCKET": "/charm/container/pebble.socket", "PEBBLE": "/charm/container/pebble"}
	c, err := Parse(file, []byte(withHooks(
		"hooks:",
		"  - on: [check-failed, check-passed, service-exited]",
		"    exec: [sh, -c, \"cat\"]",
		"  - name: operator",
		"    on: [level-failed, level-passed, checks-reset]",
		`    webhook: {url: "http://${OPERATOR}/hook", headers: {Authorization: "Bearer ${HOOK_TOKEN}"}, timeout: 2s}`,
		"  - on: stopping",
		"    exec: {command: [/bin/true], timeout: 1m}",
		"    name: last",
		"  - on: [stopping]",
		"    webhook:",
		"      url: https://pager.example.com/v1",
		"      method: PUT",
		"      headers: {X-Api-Key: [literal-key-1, literal-key-2], X-Tag: vitals}",
		"      retries: 0",
		"      backoff: {max: 100ms}",
		"  - name: charm",
		"    pebble-notice: {}",
		"  - on: [check-failed]",
		"    pebble-notice: {socket: /run/pebble.socket, repeat-after: 1h, timeout: 1s, retries: 10, backoff: {initial: 500ms, max: 30s}}",
	)), func(k string) (string, bool) { v, ok := env[k]; return v, ok }, kinds.All)
	if err != nil {
		t.Fatal(err)
	}
	want := []Hook{{
		Name: "hook-1",
		On:   []health.EventType{health.EventCheckFailed, health.EventCheckPassed, health.EventServiceExited},
		Exec: &ExecHook{Command: []string{"sh", "-c", "cat"}, Timeout: 10 * time.Second},
	}, {
		Name: "operator",
		On:   []health.EventType{health.EventLevelFailed, health.EventLevelPassed, health.EventChecksReset},
		Webhook: &WebhookHook{URL: "http://operator:8080/hook", Method: "POST",
			Header:    map[string][]string{"Authorization": {"Bearer tok-hook-123"}},
			HookRetry: HookRetry{Timeout: 2 * time.Second, Attempts: 4, BackoffInitial: 500 * time.Millisecond, BackoffMax: 10 * time.Second}},
	}, {
		Name: "last",
		On:   []health.EventType{health.EventStopping},
		Exec: &ExecHook{Command: []string{"/bin/true"}, Timeout: time.Minute},
	}, {
		Name: "hook-4",
		On:   []health.EventType{health.EventStopping},
		Webhook: &WebhookHook{URL: "https://pager.example.com/v1", Method: "PUT",
			Header:    map[string][]string{"X-Api-Key": {"literal-key-1", "literal-key-2"}, "X-Tag": {"vitals"}},
			HookRetry: HookRetry{Timeout: 5 * time.Second, Attempts: 1, BackoffInitial: 100 * time.Millisecond, BackoffMax: 100 * time.Millisecond}},
	}, {
		Name:         "charm",
		On:           DefaultPebbleNoticeOn,
		PebbleNotice: &PebbleNoticeHook{Socket: "/charm/container/pebble.socket", HookRetry: defaultRetry},
	}, {
		Name: "hook-6",
		On:   []health.EventType{health.EventCheckFailed},
		PebbleNotice: &PebbleNoticeHook{Socket: "/run/pebble.socket", RepeatAfter: time.Hour,
			HookRetry: HookRetry{Timeout: time.Second, Attempts: 11, BackoffInitial: 500 * time.Millisecond, BackoffMax: 30 * time.Second}},
	}}
	if !reflect.DeepEqual(c.Hooks, want) {
		for i := range max(len(c.Hooks), len(want)) {
			if i < len(c.Hooks) && i < len(want) && !reflect.DeepEqual(c.Hooks[i], want[i]) {
				t.Errorf("hook %d:\n%+v %+v %+v %+v\nwant\n%+v %+v %+v %+v", i, c.Hooks[i], c.Hooks[i].Exec, c.Hooks[i].Webhook, c.Hooks[i].PebbleNotice,
					want[i], want[i].Exec, want[i].Webhook, want[i].PebbleNotice)
			}
		}
		t.Fatalf("%d hooks, want %d", len(c.Hooks), len(want))
	}
	// The token from the environment, and the values of headers that carry
	// credentials, are hidden wherever vitals writes them.
	for in, want := range map[string]string{
		"Authorization: Bearer tok-hook-123": "Authorization: xxxxx",
		"token tok-hook-123 refused":         "token xxxxx refused",
		"key literal-key-2 refused":          "key xxxxx refused",
		"tag vitals":                         "tag vitals",
	} {
		if got := c.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAFileWithoutHooksHasNone(t *testing.T) {
	for _, hooksLine := range []string{"", "hooks: []"} {
		c, err := parse(t, withHooks(hooksLine))
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Hooks) != 0 {
			t.Fatalf("%q: hooks %+v", hooksLine, c.Hooks)
		}
	}
}

// A hook's zero fields take the defaults the file's get, as package hooks
// gives them to what it is given; the hook given is left as it was.
func TestAHooksZeroFieldsTakeTheDefaults(t *testing.T) {
	given := Hook{Webhook: &WebhookHook{URL: "http://operator/hook"}}
	w := given.WithDefaults(2)
	want := WebhookHook{URL: "http://operator/hook", Method: "POST", HookRetry: defaultRetry}
	if w.Name != "hook-2" || fmt.Sprint(*w.Webhook) != fmt.Sprint(want) {
		t.Fatalf("%s: %+v, want hook-2: %+v", w.Name, *w.Webhook, want)
	}
	if given.Webhook.Method != "" {
		t.Fatalf("the hook given was changed: %+v", *given.Webhook)
	}
	p := Hook{PebbleNotice: &PebbleNoticeHook{Socket: "/pebble.socket"}}.WithDefaults(3)
	if p.Name != "hook-3" || !slices.Equal(p.On, DefaultPebbleNoticeOn) || p.PebbleNotice.HookRetry != defaultRetry {
		t.Fatalf("%s on %v: %+v, want hook-3 on %v, the default retries", p.Name, p.On, *p.PebbleNotice, DefaultPebbleNoticeOn)
	}
	e := Hook{Name: "charm", Exec: &ExecHook{Command: []string{"true"}}}.WithDefaults(1)
	if e.Name != "charm" || e.Exec.Timeout != 10*time.Second {
		t.Fatalf("%s: %+v", e.Name, *e.Exec)
	}
}

// defaultRetry is a hook's retries with nothing given.
var defaultRetry = HookRetry{Timeout: 5 * time.Second, Attempts: 4, BackoffInitial: 500 * time.Millisecond, BackoffMax: 10 * time.Second}

// A pebble-notice hook finds Pebble's socket where the pebble command does:
// $PEBBLE_SOCKET, else in $PEBBLE, else in Pebble's default directory.
func TestAPebbleNoticeFindsPebblesSocketAsPebbleDoes(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"PEBBLE_SOCKET": "/charm/container/pebble.socket", "PEBBLE": "/charm/container/pebble"}, "/charm/container/pebble.socket"},
		{map[string]string{"PEBBLE": "/charm/container/pebble"}, "/charm/container/pebble/.pebble.socket"},
		{map[string]string{"PEBBLE": "", "PEBBLE_SOCKET": ""}, "/var/lib/pebble/default/.pebble.socket"},
		{nil, "/var/lib/pebble/default/.pebble.socket"},
	} {
		c, err := Parse(file, []byte(withHooks("hooks:", "  - pebble-notice: {}")),
			func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }, kinds.All)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Hooks[0].PebbleNotice.Socket; got != tc.want {
			t.Errorf("%v: socket %s, want %s", tc.env, got, tc.want)
		}
	}
}

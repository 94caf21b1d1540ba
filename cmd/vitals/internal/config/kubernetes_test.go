package config_test

import (
	"reflect"
	"strings"
	"testing"

	. "github.com/vitals-dev/vitals/cmd/vitals/internal/config"
)

// withKubernetes is a file with one check and the lines given, from line 3.
func withKubernetes(lines ...string) string {
	return y(append([]string{"checks:", "  a: {heartbeat: {ttl: 1s}}"}, lines...)...)
}

func TestBadKubernetesSaysWhatAndWhere(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		want []string
	}{
		{"a list", withKubernetes(
			"kubernetes: [events]",
		), []string{
			`vitals.yaml:3:13: kubernetes: want a mapping of condition, events, got a list`,
		}},
		{"an unknown field", withKubernetes(
			"kubernetes:",
			"  events: true",
			"  conditions: vitals.dev/ready",
		), []string{
			`vitals.yaml:5:3: kubernetes.conditions: unknown field "conditions" (want condition, events)`,
		}},
		{"nothing to tell", withKubernetes(
			"kubernetes: {events: false}",
		), []string{
			`vitals.yaml:3:13: kubernetes: nothing to tell Kubernetes: give events: true, or condition: with a condition type such as vitals.dev/ready`,
		}},
		{"events not a boolean, and every condition wrong at once", withKubernetes(
			"kubernetes:",
			"  events: yes please",
			"  condition: Ready",
		), []string{
			`vitals.yaml:4:11: kubernetes.events: want true or false, got "yes please"`,
			`vitals.yaml:5:14: kubernetes.condition: "Ready" is a pod condition Kubernetes sets itself: give one of your own with a prefix, such as vitals.dev/ready`,
		}},
		{"a condition without a prefix", withKubernetes(
			"kubernetes: {condition: ready}",
		), []string{
			`vitals.yaml:3:25: kubernetes.condition: "ready" has no prefix: a pod condition of your own is PREFIX/NAME, such as vitals.dev/ready`,
		}},
		{"a condition whose prefix is no DNS subdomain", withKubernetes(
			"kubernetes: {condition: Vitals_dev/ready}",
		), []string{
			`vitals.yaml:3:25: kubernetes.condition: "Vitals_dev/ready" is not a qualified name such as vitals.dev/ready: prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		}},
		{"a condition with an empty name", withKubernetes(
			"kubernetes: {condition: vitals.dev/}",
		), []string{
			`vitals.yaml:3:25: kubernetes.condition: "vitals.dev/" is not a qualified name such as vitals.dev/ready: name part must be non-empty; name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
		}},
		{"a condition with two slashes", withKubernetes(
			"kubernetes: {condition: vitals.dev/ready/now}",
		), []string{
			`vitals.yaml:3:25: kubernetes.condition: "vitals.dev/ready/now" is not a qualified name such as vitals.dev/ready: a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
		}},
		{"a condition from an unset variable", withKubernetes(
			"kubernetes: {condition: \"${CONDITION}\"}",
		), []string{
			`vitals.yaml:3:25: kubernetes.condition: environment variable CONDITION is not set`,
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

func TestKubernetesIsRead(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  *Kubernetes
	}{
		{nil, nil},
		{[]string{"kubernetes: {events: true}"}, &Kubernetes{Events: true}},
		{[]string{"kubernetes:", "  condition: vitals.dev/ready"}, &Kubernetes{Condition: "vitals.dev/ready"}},
		{[]string{"kubernetes:", "  events: true", "  condition: example.com/db-ready"}, &Kubernetes{Events: true, Condition: "example.com/db-ready"}},
	} {
		c, err := parse(t, withKubernetes(tc.lines...))
		if err != nil {
			t.Fatalf("%q: %v", tc.lines, err)
		}
		if !reflect.DeepEqual(c.Kubernetes, tc.want) {
			t.Errorf("%q: kubernetes %+v, want %+v", tc.lines, c.Kubernetes, tc.want)
		}
	}
}

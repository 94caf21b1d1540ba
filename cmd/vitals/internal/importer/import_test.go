package importer

import (
	"slices"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

// k8sSamples are a probe of each handler of the kubelet's, as a manifest
// writes it: the importer reads every one.
var k8sSamples = map[string]string{
	"httpGet":   "{httpGet: {port: 8080, path: /healthz, httpHeaders: [{name: X-A, value: '1'}]}}",
	"tcpSocket": "{tcpSocket: {port: 5432}}",
	"exec":      "{exec: {command: [/bin/true]}}",
	"grpc":      "{grpc: {port: 50051, service: my.Service}}",
}

// pebbleSamples are a check of each kind of Pebble's, as a layer writes it.
var pebbleSamples = map[string]string{
	"http": "{level: ready, http: {url: 'http://localhost:8080/health', headers: {X-A: '1'}}}",
	"tcp":  "{level: ready, tcp: {port: 5432}}",
	"exec": "{level: ready, exec: {command: /bin/true, environment: {A: '1'}, working-dir: /}}",
}

// Every kind of the table that says it imports a kubelet's handler or a
// Pebble kind is what a probe or a check of it becomes, through the table:
// a kind that declares an import is reached here with no edit of the
// importers, and one that declares a handler the importers do not read
// fails here.
func TestEveryKindThatDeclaresAnImportIsWhatThePeersCheckBecomes(t *testing.T) {
	for _, k := range kinds.All {
		if k.Import == nil {
			continue
		}
		if h := k.Import.Kubelet; h != "" {
			t.Run(k.Name+"/kubelet/"+h, func(t *testing.T) {
				sample, ok := k8sSamples[h]
				if !ok {
					t.Fatalf("kind %s imports the kubelet's %s, which no importer test reaches: add a probe of it to k8sSamples", k.Name, h)
				}
				r, err := Kubernetes("pod.yaml", manifest("kind: Pod", "metadata: {name: p}", "spec:", "  containers:",
					"    - name: app", "      readinessProbe: "+sample), "")
				if err != nil {
					t.Fatal(err)
				}
				if c, ok := load(t, r.YAML)["app-ready"]; !ok || c.Kind != k.Name {
					t.Errorf("the kubelet's %s is imported as %q, want %s:\n%s", h, c.Kind, k.Name, r.YAML)
				}
			})
		}
		if pk := k.Import.Pebble; pk != "" {
			t.Run(k.Name+"/pebble/"+pk, func(t *testing.T) {
				sample, ok := pebbleSamples[pk]
				if !ok {
					t.Fatalf("kind %s imports Pebble's %s, which no importer test reaches: add a check of it to pebbleSamples", k.Name, pk)
				}
				r, err := Pebble("layer.yaml", layer("checks:", "  c: "+sample), "")
				if err != nil {
					t.Fatal(err)
				}
				if c, ok := load(t, r.YAML)["c"]; !ok || c.Kind != k.Name {
					t.Errorf("Pebble's %s is imported as %q, want %s:\n%s", pk, c.Kind, k.Name, r.YAML)
				}
			})
		}
	}
}

// fullPeer has every part a peer's check may have, each as a kind takes it.
var fullPeer = kinds.Peer{
	URL:          "https://localhost:8443/healthz",
	Status:       "200-299",
	StatusNote:   "the peer passes 2xx only",
	Headers:      []kinds.Named{{Name: "X-A", Values: []string{"1", "2"}}, {Name: "Accept", Values: []string{""}}},
	Insecure:     true,
	InsecureNote: "the peer does not verify the certificate",
	Address:      "localhost:50051",
	Service:      "my service?",
	Command:      []string{"/bin/sh", "-c", "exit 0"},
	Env:          []kinds.Named{{Name: "A", Values: []string{"$1"}}},
	Dir:          "/",
}

// What every kind's import writes is its own: each key one of the kind's
// fields, and the block, as the importer writes it, loads as the kind.
func TestEveryKeyAKindsImportWritesIsOneOfItsFields(t *testing.T) {
	for _, k := range kinds.All {
		if k.Import == nil {
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			im := newImporter(kinds.All)
			spec, err := im.block(k, fullPeer, node{})
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, f := range k.Fields() {
				keys = append(keys, f.Key)
			}
			for _, f := range spec {
				if !slices.Contains(keys, f.key) {
					t.Errorf("the import writes %q, which is not a field of %s (%s)", f.key, k.Name, strings.Join(keys, ", "))
				}
			}
			data := render(vitalsFile{checks: []check{{name: "c", level: "ready", kind: k.Name, spec: spec}}})
			if c := load(t, data)["c"]; c.Kind != k.Name {
				t.Errorf("loaded as %q:\n%s", c.Kind, data)
			}
		})
	}
}

// A handler or a Pebble kind that no kind of the table takes is left out by
// one rule, said in a warning (and, for a manifest, in the file).
func TestAPeersCheckThatNoKindTakesIsLeftOut(t *testing.T) {
	without := func(name string) kinds.Table {
		return slices.DeleteFunc(slices.Clone(kinds.All), func(k *kinds.Kind) bool { return k.Name == name })
	}
	r, err := newImporter(without("grpc")).kubernetes("pod.yaml", manifest("kind: Pod", "metadata: {name: p}", "spec:", "  containers:",
		"    - name: app", "      livenessProbe: "+k8sSamples["grpc"], "      readinessProbe: "+k8sSamples["tcpSocket"]), "")
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "warnings", r.Warnings, []string{
		`app-live: left out: vitals has no kind for a grpc probe`,
		`app-ready: no host, so the kubelet probes the pod IP: written as localhost, the pod seen from inside it`,
	})
	if checks := load(t, r.YAML); len(checks) != 1 || !strings.Contains(string(r.YAML), "  # app-live: left out: vitals has no kind for a grpc probe\n") {
		t.Errorf("the grpc probe is not left out with a note:\n%s", r.YAML)
	}

	r, err = newImporter(without("exec")).pebble("layer.yaml", layer("checks:", "  a: "+pebbleSamples["exec"], "  b: "+pebbleSamples["tcp"]), "")
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "warnings", r.Warnings, []string{`check "a": left out: vitals has no kind for a Pebble exec check`})
	if checks := load(t, r.YAML); len(checks) != 1 || checks["b"].Kind != "tcp" {
		t.Errorf("the exec check is not left out:\n%s", r.YAML)
	}
}

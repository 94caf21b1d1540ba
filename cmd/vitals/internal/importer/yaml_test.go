package importer

import (
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

func TestScalarsReadBackAsTheSameString(t *testing.T) {
	for in, want := range map[string]string{
		"web":                              "web",
		"/data/homeserver.yaml":            "/data/homeserver.yaml",
		"http://localhost:8008/health":     "http://localhost:8008/health",
		"http://h:1/healthz?phase=startup": "http://h:1/healthz?phase=startup",
		"-c":                               "-c",
		"--config-path":                    "--config-path",
		"200-299":                          `"200-299"`,
		"2xx":                              `"2xx"`,
		"v1.31.0":                          "v1.31.0",
		"Yes":                              `"Yes"`,
		"1:20":                             `"1:20"`,
		"-1":                               `"-1"`,
		"+.5":                              `"+.5"`,
		".NaN":                             `".NaN"`,
		".data":                            ".data",
		"":                                 `""`,
		"true":                             `"true"`,
		"no":                               `"no"`,
		"null":                             `"null"`,
		"~":                                `"~"`,
		"8080":                             `"8080"`,
		"1e3":                              `"1e3"`,
		"0x1f":                             `"0x1f"`,
		".inf":                             `".inf"`,
		"-":                                `"-"`,
		"a: b":                             `"a: b"`,
		"key:":                             `"key:"`,
		"a #b":                             `"a #b"`,
		"[x]":                              `"[x]"`,
		"a,b":                              `"a,b"`,
		"*alias":                           `"*alias"`,
		"&anchor":                          `"&anchor"`,
		"!tag":                             `"!tag"`,
		"@x":                               `"@x"`,
		"%x":                               `"%x"`,
		"'q'":                              `"'q'"`,
		"pg_isready --host \"$H\" --quiet": `"pg_isready --host \"$H\" --quiet"`,
		"line\nbreak\ttab\\slash\x00\x7f":  `"line\nbreak\ttab\\slash\x00\x7f"`,
		"sep\u2028\u0085":                  `"sep\u2028\u0085"`,
		"héllo":                            `"héllo"`,
	} {
		got := scalar(in)
		if got != want {
			t.Errorf("scalar(%q) = %s, want %s", in, got, want)
		}
		f, err := parser.ParseBytes([]byte("k: ["+got+"]\nv: "+got+"\n"), 0)
		if err != nil {
			t.Errorf("scalar(%q) = %s, which does not parse: %v", in, got, err)
			continue
		}
		m := f.Docs[0].Body.(*ast.MappingNode)
		inFlow := m.Values[0].Value.(*ast.SequenceNode).Values[0]
		for _, n := range []ast.Node{inFlow, m.Values[1].Value} {
			if s, ok := n.(*ast.StringNode); !ok || s.Value != in {
				t.Errorf("scalar(%q) = %s, which reads back as %T %v", in, got, n, n)
			}
		}
	}
}

func TestValuesDoubleEveryDollarSoThatTheLoaderKeepsThem(t *testing.T) {
	for in, want := range map[string]string{
		"$HOME":              `$$HOME`,
		"${TOKEN}":           `"$${TOKEN}"`,
		"$$":                 `$$$$`,
		"echo $HOSTNAME now": `"echo $$HOSTNAME now"`,
	} {
		if got := value(in); got != want {
			t.Errorf("value(%q) = %s, want %s", in, got, want)
		}
	}
}

package logkeys

import (
	"slices"
	"strings"
	"testing"
)

func TestKeysRefusesAKeyGivenTwiceAtAnyDepth(t *testing.T) {
	for _, c := range []struct {
		line string
		keys []string // nil: refused, with err
		err  string
	}{
		{`{"time":"t","level":"INFO","msg":"m","check_level":"ready"}`, []string{"time", "level", "msg", "check_level"}, ""},
		{`{"a":{"b":1,"c":[{"d":1},{"d":2}]},"e":[1,"x",null,true]}`, []string{"a", "e"}, ""},
		{`{}`, nil, ""},
		{`{"time":"t","level":"WARN","msg":"m","level":"ready"}`, nil, `key "level" given twice`},
		{`{"g":{"k":1,"k":2}}`, nil, `g: key "k" given twice`},
		{`{"g":[{"k":1,"k":2}]}`, nil, `g: key "k" given twice`},
		{`{"a":1}{"b":2}`, nil, "more after its object"},
		{`["a"]`, nil, "not a JSON object"},
		{`to stderr`, nil, "invalid character"},
		{`{"a":`, nil, "EOF"},
	} {
		keys, err := Keys([]byte(c.line))
		if c.err == "" && (err != nil || !slices.Equal(keys, c.keys)) {
			t.Errorf("%s: keys %q, %v; want %q", c.line, keys, err, c.keys)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: keys %q, %v; want an error with %q", c.line, keys, err, c.err)
		}
	}
}

// Package logkeys reads the keys of a JSON log line the way a collector
// must be able to: each once. encoding/json keeps the last of two values
// under one key without a word, and so do Loki, Vector and jq, so a line
// that gives a key twice loses one of them in every tool that reads it.
// Keys walks the line token by token and refuses a key given twice, at any
// depth.
//
// It is for this repository's tests, in any of its modules: the health
// package's and the agent's tests read every line vitals writes through it.
// It lives under the root module's internal/ so that both can use it.
package logkeys

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Keys returns the keys of the JSON object line, in the order they come, or
// an error when line is not one JSON object or gives a key twice in any of
// its objects.
func Keys(line []byte) ([]string, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil {
		return nil, fmt.Errorf("log line %q: %w", line, err)
	}
	if tok != json.Delim('{') {
		return nil, fmt.Errorf("log line %q: not a JSON object", line)
	}
	keys, err := object(d)
	if err != nil {
		return nil, fmt.Errorf("log line %q: %w", line, err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("log line %q: more after its object", line)
	}
	return keys, nil
}

// object reads the members of an object whose { was read, and its }.
func object(d *json.Decoder) ([]string, error) {
	var keys []string
	seen := map[string]bool{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string) // the decoder refuses any other token here
		if seen[key] {
			return nil, fmt.Errorf("key %q given twice", key)
		}
		seen[key] = true
		keys = append(keys, key)
		if err := value(d); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	_, err := d.Token() // }
	return keys, err
}

// value reads one value, and the keys of every object in it.
func value(d *json.Decoder) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		_, err = object(d)
		return err
	case json.Delim('['):
		for d.More() {
			if err := value(d); err != nil {
				return err
			}
		}
		_, err = d.Token() // ]
		return err
	}
	return nil
}

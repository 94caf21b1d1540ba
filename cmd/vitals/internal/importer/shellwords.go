package importer

import (
	"errors"
	"strings"
)

// splitWords splits a command line into words as Pebble does before it runs
// an exec check or a service (canonical/x-go's strutil/shlex, a fork of
// google/shlex), with no shell: words are separated by spaces, tabs and line
// breaks; a backslash outside single quotes takes the next character as it
// is (inside double quotes too, so "a\b" is ab, unlike a POSIX shell);
// single quotes keep everything up to the next single quote; double quotes
// keep everything up to the next unescaped double quote; quoted parts join
// the word around them, and an empty pair of quotes is an empty word; a #
// that starts a word begins a comment that runs to the end of the line.
// Nothing is expanded: $HOME stays $HOME. An unterminated quote, or a
// backslash at the end, is an error, as it is in Pebble.
func splitWords(s string) ([]string, error) {
	const (
		between       = iota // between words
		inWord               // in a word, outside quotes
		escaped              // after a backslash outside quotes
		inSingle             // inside '…'
		inDouble             // inside "…"
		escapedDouble        // after a backslash inside "…"
		inComment            // after a # that starts a word
	)
	var (
		words []string
		word  strings.Builder
		state = between
	)
	for _, r := range s {
		switch state {
		case between:
			switch r {
			case ' ', '\t', '\r', '\n':
			case '#':
				state = inComment
			case '\\':
				state = escaped
			case '\'':
				state = inSingle
			case '"':
				state = inDouble
			default:
				word.WriteRune(r)
				state = inWord
			}
		case inWord:
			switch r {
			case ' ', '\t', '\r', '\n':
				words = append(words, word.String())
				word.Reset()
				state = between
			case '\\':
				state = escaped
			case '\'':
				state = inSingle
			case '"':
				state = inDouble
			default:
				word.WriteRune(r)
			}
		case escaped:
			word.WriteRune(r)
			state = inWord
		case inSingle:
			if r == '\'' {
				state = inWord
			} else {
				word.WriteRune(r)
			}
		case inDouble:
			switch r {
			case '"':
				state = inWord
			case '\\':
				state = escapedDouble
			default:
				word.WriteRune(r)
			}
		case escapedDouble:
			word.WriteRune(r)
			state = inDouble
		case inComment:
			if r == '\n' {
				state = between
			}
		}
	}
	switch state {
	case inWord:
		words = append(words, word.String())
	case escaped:
		return nil, errors.New(`a \ at the end escapes nothing`)
	case inSingle:
		return nil, errors.New("unterminated ' quote")
	case inDouble, escapedDouble:
		return nil, errors.New(`unterminated " quote`)
	}
	return words, nil
}

package kinds

import "testing"

func TestEscapesLetAProtocolBeTypedOnACommandLine(t *testing.T) {
	for in, want := range map[string]string{
		`PING\r\n`: "PING\r\n", `a\tb`: "a\tb", `\x00\xff`: "\x00\xff", `back\\slash`: `back\slash`,
		`say "hi"\n`: "say \"hi\"\n", "plain": "plain",
	} {
		if got, err := unescape("--send", in); err != nil || got != want {
			t.Errorf("unescape(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

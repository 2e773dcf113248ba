package config

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"testing/iotest"
)

func TestParseProperties(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"equals", "a=b", map[string]string{"a": "b"}},
		{"colon", "a:b", map[string]string{"a": "b"}},
		{"space", "a b", map[string]string{"a": "b"}},
		{"spaces around separator", "  a  =  b", map[string]string{"a": "b"}},
		{"trailing value whitespace kept", "a = b  ", map[string]string{"a": "b  "}},
		{"whitespace then equals", "a \t: b", map[string]string{"a": "b"}},
		{"only one separator eaten", "a==b", map[string]string{"a": "=b"}},
		{"second separator after space", "a = = b", map[string]string{"a": "= b"}},
		{"empty value", "a=", map[string]string{"a": ""}},
		{"key only", "a", map[string]string{"a": ""}},
		{"hash comment", "# a=b\n  #c=d\nx=y", map[string]string{"x": "y"}},
		{"bang comment", "! a=b\nx=y", map[string]string{"x": "y"}},
		{"hash inside value", "a=b#c", map[string]string{"a": "b#c"}},
		{"blank lines", "\n\n  \t\na=b\n\n", map[string]string{"a": "b"}},
		{"CRLF and CR", "a=1\r\nb=2\rc=3", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"continuation", "a=one, \\\n    two, \\\n\tthree", map[string]string{"a": "one, two, three"}},
		{"continuation in key", "ab\\\n  cd=1", map[string]string{"abcd": "1"}},
		{"escaped backslash is not continuation", "a=b\\\\\nc=d", map[string]string{"a": `b\`, "c": "d"}},
		{"continued line starting with hash", "a=b\\\n#c", map[string]string{"a": "b#c"}},
		{"comment not continued", "#a\\\nb=c", map[string]string{"b": "c"}},
		{"backslash at EOF dropped", "a=b\\", map[string]string{"a": "b"}},
		{"escapes", `a=x\ty\nz\rw\fv`, map[string]string{"a": "x\ty\nz\rw\fv"}},
		{"escaped separators in key", `a\=b\:c\ d=e`, map[string]string{"a=b:c d": "e"}},
		{"unknown escape is the char", `a=\q\#`, map[string]string{"a": "q#"}},
		{"unicode escape", `a=caf\u00e9`, map[string]string{"a": "café"}},
		{"surrogate pair", `a=\uD83D\uDE00`, map[string]string{"a": "😀"}},
		{"utf8 passthrough", "ключ=значение", map[string]string{"ключ": "значение"}},
		{"last duplicate wins", "a=1\na=2", map[string]string{"a": "2"}},
		{"leading value whitespace after continuation", "a=\\\n   b", map[string]string{"a": "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProperties(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("ParseProperties: %v", err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParsePropertiesErrors(t *testing.T) {
	for _, in := range []string{`a=\u12`, `a=\uzzzz`, "x=1\nb=\\u00G1"} {
		if _, err := ParseProperties(strings.NewReader(in)); err == nil {
			t.Errorf("%q: want malformed \\uxxxx error", in)
		}
	}
	readErr := errors.New("disk gone")
	if _, err := ParseProperties(iotest.ErrReader(readErr)); !errors.Is(err, readErr) {
		t.Errorf("reader error: got %v", err)
	}
}

// FuzzParseProperties checks that arbitrary bytes never crash the parser.
func FuzzParseProperties(f *testing.F) {
	for _, s := range []string{"a=b", `a\u00`, "a\\\n\\", `\`, `\u`, "#\\\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseProperties(strings.NewReader(s))
	})
}

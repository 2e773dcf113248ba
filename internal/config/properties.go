package config

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
)

// ParseProperties reads Java .properties text as java.util.Properties.load
// does: key=value, key: value and "key value" lines; # and ! comments; a
// line ending in an odd number of backslashes continues on the next line,
// whose leading whitespace is skipped; escapes \t \n \r \f \uXXXX and \x for
// any other x. Leading whitespace of keys and values is dropped, trailing
// whitespace of values is kept (Kafka trims it when it parses the value).
// Later duplicates win. The input is read as UTF-8.
func ParseProperties(r io.Reader) (map[string]string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("config: reading properties: %w", err)
	}
	props := map[string]string{}
	for _, line := range logicalLines(string(data)) {
		k, v, err := splitLine(line.text)
		if err != nil {
			return nil, fmt.Errorf("config: properties line %d: %w", line.num, err)
		}
		props[k] = v
	}
	return props, nil
}

type logicalLine struct {
	text string
	num  int // 1-based number of the natural line it starts on
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// logicalLines splits text into logical lines: comments and blank lines are
// dropped, continuations joined (the joining backslash removed, the next
// line's leading whitespace skipped).
func logicalLines(text string) []logicalLine {
	natural := naturalLines(text)
	var out []logicalLine
	for i := 0; i < len(natural); i++ {
		first := strings.TrimLeft(natural[i], " \t\f")
		if first == "" || first[0] == '#' || first[0] == '!' {
			continue
		}
		start := i + 1
		var b strings.Builder
		cur := first
		for continues(cur) && i+1 < len(natural) {
			b.WriteString(cur[:len(cur)-1])
			i++
			cur = strings.TrimLeft(natural[i], " \t\f")
		}
		if continues(cur) { // backslash at end of input: dropped
			cur = cur[:len(cur)-1]
		}
		b.WriteString(cur)
		out = append(out, logicalLine{text: b.String(), num: start})
	}
	return out
}

// naturalLines splits on \n, \r and \r\n.
func naturalLines(text string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			lines = append(lines, text[start:i])
			start = i + 1
		case '\r':
			lines = append(lines, text[start:i])
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(text) {
		lines = append(lines, text[start:])
	}
	return lines
}

// continues reports whether line ends in an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitLine separates a logical line into its unescaped key and value.
func splitLine(line string) (string, string, error) {
	keyEnd, valStart := len(line), len(line)
	escaped := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if escaped {
			escaped = false
			continue
		}
		if c == '\\' {
			escaped = true
			continue
		}
		if c == '=' || c == ':' || isBlank(c) {
			keyEnd = i
			valStart = skipSeparator(line, i)
			break
		}
	}
	k, err := unescape(line[:keyEnd])
	if err != nil {
		return "", "", err
	}
	v, err := unescape(line[valStart:])
	return k, v, err
}

// skipSeparator returns where the value starts: whitespace, at most one '='
// or ':', then whitespace again.
func skipSeparator(line string, i int) int {
	for i < len(line) && isBlank(line[i]) {
		i++
	}
	if i < len(line) && (line[i] == '=' || line[i] == ':') {
		i++
	}
	for i < len(line) && isBlank(line[i]) {
		i++
	}
	return i
}

// unescape applies Java's loadConvert; \uXXXX pairs that form a UTF-16
// surrogate pair become one rune.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	var high rune // pending high surrogate
	flush := func() {
		if high != 0 {
			b.WriteRune(high) // lone surrogate: written as U+FFFD
			high = 0
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			flush()
			b.WriteByte(s[i])
			continue
		}
		i++
		if s[i] != 'u' {
			flush()
			b.WriteByte(simpleEscape(s[i]))
			continue
		}
		if i+5 > len(s) {
			return "", fmt.Errorf(`malformed \uxxxx encoding in %q`, s)
		}
		n, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
		if err != nil {
			return "", fmt.Errorf(`malformed \uxxxx encoding in %q`, s)
		}
		i += 4
		r := rune(n)
		switch {
		case utf16.IsSurrogate(r) && high != 0:
			b.WriteRune(utf16.DecodeRune(high, r))
			high = 0
		case r >= 0xD800 && r < 0xDC00:
			flush()
			high = r
		default:
			flush()
			b.WriteRune(r)
		}
	}
	flush()
	return b.String(), nil
}

func simpleEscape(c byte) byte {
	switch c {
	case 't':
		return '\t'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 'f':
		return '\f'
	}
	return c
}

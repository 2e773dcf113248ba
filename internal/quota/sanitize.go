package quota

import (
	"net/url"
	"strings"
)

// Sanitize encodes an entity name as Kafka's Sanitizer does for ZooKeeper
// paths and metric tags: Java's URLEncoder (letters, digits, '.', '-',
// '_' kept; everything else %XX of its UTF-8 bytes), with "*" as %2A and
// space as %20.
func Sanitize(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-', c == '_':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte("0123456789ABCDEF"[c>>4])
			b.WriteByte("0123456789ABCDEF"[c&15])
		}
	}
	return b.String()
}

// Desanitize reverses Sanitize (Java's URLDecoder).
func Desanitize(s string) (string, error) { return url.QueryUnescape(s) }

// Principal is the user of every connection while Samsa has no
// authentication: Kafka's KafkaPrincipal.ANONYMOUS.
const Principal = "ANONYMOUS"

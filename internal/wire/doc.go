// Package wire reads and writes Kafka protocol frames: the 4-byte size
// prefix, request headers v0–v2 (client id, tagged fields) and response
// headers v0–v1. Request and response bodies are franz-go kmsg types; this
// package never encodes a body by hand.
//
// Invariants: a frame larger than the configured maximum is refused before
// it is read; an unknown API key, a version outside Supported or a body that
// does not decode is an error the server answers by closing the connection,
// except ApiVersions, which answers UNSUPPORTED_VERSION with a v0 body as
// Kafka does. Bytes left over after a body make it malformed. Supported is
// the only table of versions, and stays within what kmsg can decode (a test
// checks). Each frame gets its own buffer; decoded byte fields alias it.
// The brokers' own connections (Dial, BrokerClient) and the ones they
// accept (CapRetransmits) wait at most RetransmitMax between two TCP
// retransmissions (rto.go). No goroutines live here.
package wire

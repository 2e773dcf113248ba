package wire

import "errors"

// Sentinel errors. Every error this package returns wraps one of them (or an
// I/O error from the reader), so callers decide with errors.Is. All of them
// mean the connection must close, except ErrUnsupportedVersion for
// ApiVersions, which the server answers with UNSUPPORTED_VERSION.
var (
	// ErrFrameTooLarge: the size prefix is negative or above the maximum
	// (Kafka's socket.request.max.bytes). The body is not read.
	ErrFrameTooLarge = errors.New("wire: frame too large")
	// ErrUnknownKey: the API key is not one this broker serves.
	ErrUnknownKey = errors.New("wire: unknown api key")
	// ErrUnsupportedVersion: the key is served, but not at this version.
	ErrUnsupportedVersion = errors.New("wire: unsupported api version")
	// ErrMalformed: the header or the body does not decode. Bytes after the
	// body are not an error: Kafka ignores them too.
	ErrMalformed = errors.New("wire: malformed request")
)

package wire

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// RequestHeader is Kafka's request header (v0, v1 or v2). ClientID is nil
// when the client sent a null client id or the header is v0; Kafka treats
// both like an empty id.
type RequestHeader struct {
	Key, Version  int16
	CorrelationID int32
	ClientID      *string
}

// fixedHeaderLen is key + version + correlation id.
const fixedHeaderLen = 8

// ParseRequest decodes one frame (without its size prefix) into the request
// header and the kmsg request body.
//
// The header is v2 (v1 plus tagged fields) when the request version is
// flexible, v0 for ControlledShutdown v0 and v1 otherwise. Errors:
//   - ErrMalformed: the frame is shorter than a header, the header or body
//     does not decode, or bytes follow the body;
//   - ErrUnknownKey: the key is not in Supported;
//   - ErrUnsupportedVersion: the version is outside Supported[key].
//
// With ErrUnknownKey the header carries key, version and correlation id;
// with ErrUnsupportedVersion it is complete (client id included), so the
// caller can answer ApiVersions. The request is nil whenever err is not.
//
// Bodies are decoded with kmsg's copying ReadFrom, except byte fields (such
// as produce records), which alias frame.
func ParseRequest(frame []byte) (RequestHeader, kmsg.Request, error) {
	var h RequestHeader
	if len(frame) < fixedHeaderLen {
		return h, nil, fmt.Errorf("%w: %d-byte frame is shorter than a request header", ErrMalformed, len(frame))
	}
	h.Key = int16(binary.BigEndian.Uint16(frame[0:]))
	h.Version = int16(binary.BigEndian.Uint16(frame[2:]))
	h.CorrelationID = int32(binary.BigEndian.Uint32(frame[4:]))

	rng, served := Supported[h.Key]
	req := kmsg.RequestForKey(h.Key)
	if !served || req == nil {
		return h, nil, fmt.Errorf("%w: key %d", ErrUnknownKey, h.Key)
	}
	req.SetVersion(h.Version)
	body, err := parseHeaderTail(&h, frame[fixedHeaderLen:], headerVersion(h, req))
	if err != nil {
		return h, nil, err
	}
	if h.Version < rng.Min || h.Version > rng.Max {
		return h, nil, fmt.Errorf("%w: %s v%d (supported %d-%d)",
			ErrUnsupportedVersion, kmsg.NameForKey(h.Key), h.Version, rng.Min, rng.Max)
	}
	req, err = parseBody(h, body)
	if err != nil {
		return h, nil, err
	}
	return h, req, nil
}

// headerVersion is Kafka's ApiKeys.requestHeaderVersion.
func headerVersion(h RequestHeader, req kmsg.Request) int {
	switch {
	case h.Key == int16(kmsg.ControlledShutdown) && h.Version == 0:
		return 0
	case req.IsFlexible():
		return 2
	default:
		return 1
	}
}

// parseHeaderTail reads what follows the fixed header fields: the client id
// (v1+) and the tagged fields (v2). It returns the body that follows.
func parseHeaderTail(h *RequestHeader, b []byte, version int) ([]byte, error) {
	if version == 0 {
		return b, nil
	}
	if len(b) < 2 {
		return nil, fmt.Errorf("%w: header ends before the client id", ErrMalformed)
	}
	n := int(int16(binary.BigEndian.Uint16(b)))
	b = b[2:]
	switch {
	case n == -1:
	case n < -1 || n > len(b):
		return nil, fmt.Errorf("%w: client id length %d with %d bytes left", ErrMalformed, n, len(b))
	default:
		id := string(b[:n])
		h.ClientID = &id
		b = b[n:]
	}
	if version < 2 {
		return b, nil
	}
	r := tagReader{src: b}
	kmsg.SkipTags(&r)
	if r.bad {
		return nil, fmt.Errorf("%w: header tagged fields", ErrMalformed)
	}
	return r.src, nil
}

// parseBody decodes the body with a fresh request of h's key and version.
// Bytes after the body are ignored, as Kafka's broker ignores them (its
// generated request classes read what their schema holds and no more):
// segmentio/kafka-go, for one, sends DescribeAcls v2+ with a tagged-field
// byte too many.
func parseBody(h RequestHeader, body []byte) (kmsg.Request, error) {
	req := newRequest(h)
	if err := req.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("%w: %s v%d: %v", ErrMalformed, kmsg.NameForKey(h.Key), h.Version, err)
	}
	return req, nil
}

func newRequest(h RequestHeader) kmsg.Request {
	req := kmsg.RequestForKey(h.Key)
	req.SetVersion(h.Version)
	return req
}

// tagReader is the bounds-checked reader kmsg.SkipTags needs.
type tagReader struct {
	src []byte
	bad bool
}

func (r *tagReader) Uvarint() uint32 {
	v, n := binary.Uvarint(r.src)
	if n <= 0 || n > 5 || v > 1<<32-1 {
		r.fail()
		return 0
	}
	r.src = r.src[n:]
	return uint32(v)
}

func (r *tagReader) Span(n int) []byte {
	if n < 0 || n > len(r.src) {
		r.fail()
		return nil
	}
	s := r.src[:n]
	r.src = r.src[n:]
	return s
}

func (r *tagReader) Ok() bool { return !r.bad }

func (r *tagReader) fail() {
	r.bad = true
	r.src = nil
}

package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// exactAllocLimit is the largest frame whose buffer ReadFrame allocates in
// one piece. Larger frames grow as their bytes arrive, so a peer that
// announces a huge frame and sends nothing does not pin that much memory.
const exactAllocLimit = 1 << 20

// ReadFrame reads one size-prefixed frame: a 4-byte big-endian length, then
// that many bytes. A size below zero or above maxSize is ErrFrameTooLarge and
// the body is left unread. Every frame gets a new buffer, so requests decoded
// from it may alias it safely.
//
// At a clean frame boundary the end of input is io.EOF; inside a frame it is
// io.ErrUnexpectedEOF (wrapped).
func ReadFrame(r io.Reader, maxSize int32) ([]byte, error) {
	var sizeBuf [4]byte
	if _, err := io.ReadFull(r, sizeBuf[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("wire: reading frame size: %w", err)
	}
	size := int32(binary.BigEndian.Uint32(sizeBuf[:]))
	if size < 0 || size > maxSize {
		return nil, fmt.Errorf("%w: size %d, max %d", ErrFrameTooLarge, size, maxSize)
	}
	buf, err := readBody(r, int(size))
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("wire: reading %d-byte frame: %w", size, err)
	}
	return buf, nil
}

// readBody reads exactly size bytes, allocating at most twice what arrived.
func readBody(r io.Reader, size int) ([]byte, error) {
	if size <= exactAllocLimit {
		buf := make([]byte, size)
		_, err := io.ReadFull(r, buf)
		return buf, err
	}
	buf := make([]byte, 0, exactAllocLimit)
	for len(buf) < size {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(size, 2*cap(buf)))
			copy(grown, buf)
			buf = grown
		}
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// AppendResponse appends one response frame to dst: the size prefix, the
// response header (correlation id, plus an empty tagged-field section when
// the response is flexible) and the body. ApiVersions responses always use
// response header v0, as Kafka's do, so that a client that does not yet know
// the broker's versions can read them.
//
// The caller sets resp's version; it usually equals hdr.Version, but an
// ApiVersions answer to an unsupported version is v0.
func AppendResponse(dst []byte, hdr RequestHeader, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(hdr.CorrelationID))
	if ResponseHeaderLen(resp) == 9 {
		dst = append(dst, 0) // no tagged fields
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// ResponseHeaderLen is the length of what AppendResponse writes before
// resp's body: the frame size, the correlation id and, in a flexible
// response header (v1, every flexible response but ApiVersions), the
// empty tagged fields.
func ResponseHeaderLen(resp kmsg.Response) int {
	if resp.IsFlexible() && resp.Key() != int16(kmsg.ApiVersions) {
		return 9
	}
	return 8
}

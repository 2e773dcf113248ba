package server

// Buffer reuse on the hot paths, so that moving records costs no garbage
// (each large allocation is zeroed, and their rate sets how often the
// collector runs and stops the world):
//
//   - response frames are encoded into pooled buffers, returned once the
//     writer has written them;
//   - Produce request frames (up to maxPooledFrame) are read into pooled
//     buffers, returned once the response is encoded: the produce handler
//     keeps nothing of its request (records are written to the log). Other
//     requests get a buffer of their own (wire.ReadFrame), as their
//     decoded fields may alias it for as long as the handler likes;
//   - a Handler may register functions with AfterResponse to release
//     buffers its response refers to (e.g. record batches read from the
//     log) once that response is encoded.
//
// Evidence: added with the replication data path (commit 4bc4b15), measured
// with samsa-bench -replication (produce throughput and latency, RF 3
// acks=all); no before/after figure for the pools alone was recorded.

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

const (
	// maxPooledFrame bounds the produce frames read into pooled buffers,
	// allocated at once at the announced size; larger ones grow as their
	// bytes arrive (wire.ReadFrame), copied at each doubling. A producer
	// sends a request of up to a batch per partition (franz-go's and the
	// Java client's batches are 1 MiB at most by default): 16 partitions
	// make 16 MiB requests, whose growth cost a copy of about each byte
	// (samsa-bench -partitions 16: 12% of the broker's CPU in memmove).
	maxPooledFrame = 32 << 20
	// maxPooledResponse: larger response buffers are left to the GC.
	maxPooledResponse = 16 << 20
)

// Frame buffers come in power-of-two classes from minFrameClass up to
// maxPooledFrame.
const (
	minFrameClass = 64 << 10
	frameClasses  = 10 // 64 KiB << 9 = maxPooledFrame
)

var (
	framePools   [frameClasses]sync.Pool // *[]byte by class
	responsePool sync.Pool               // *[]byte
)

// frameClass is the index of the smallest class holding n bytes.
func frameClass(n int) int {
	if n <= minFrameClass {
		return 0
	}
	return bits.Len(uint((n - 1) / minFrameClass))
}

var errNotPooled = errors.New("not pooled")

// readFrame reads the next frame: a Produce frame up to maxPooledFrame into
// a pooled buffer (pooled true: return it with releaseFrame once the
// request is done with), any other as wire.ReadFrame does.
func readFrame(br *bufio.Reader, maxSize int32) (frame []byte, pooled bool, err error) {
	head, err := br.Peek(4)
	if err == nil {
		if size := int32(binary.BigEndian.Uint32(head)); size >= 8 && size <= maxSize && size <= maxPooledFrame {
			head, err = br.Peek(6) // the frame has them: as blocking as reading it
		} else {
			err = errNotPooled
		}
	}
	if err != nil || int16(binary.BigEndian.Uint16(head[4:])) != int16(kmsg.Produce) {
		frame, err = wire.ReadFrame(br, maxSize)
		return frame, false, err
	}
	size := int32(binary.BigEndian.Uint32(head))
	if _, err := br.Discard(4); err != nil {
		return nil, false, err
	}
	frame = getFrame(int(size))
	if _, err := io.ReadFull(br, frame); err != nil {
		releaseFrame(frame)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, false, fmt.Errorf("wire: reading %d-byte frame: %w", size, err)
	}
	return frame, true, nil
}

// getFrame returns a pooled buffer of length n (<= maxPooledFrame).
func getFrame(n int) []byte {
	c := frameClass(n)
	if p, ok := framePools[c].Get().(*[]byte); ok {
		return (*p)[:n]
	}
	return make([]byte, n, minFrameClass<<c)
}

func releaseFrame(b []byte) {
	c := frameClass(cap(b))
	if c >= len(framePools) || cap(b) != minFrameClass<<c {
		return
	}
	b = b[:0]
	framePools[c].Put(&b)
}

// getResponseBuffer returns an empty pooled buffer to encode a response
// into.
func getResponseBuffer() []byte {
	if p, ok := responsePool.Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return nil
}

func releaseResponseBuffer(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooledResponse {
		return
	}
	b = b[:0]
	responsePool.Put(&b)
}

type loopKey struct{}

// AfterResponse registers fn to run once the response to the request being
// handled has been encoded, or dropped: buffers the response refers to may
// be reused then. It must be called from the goroutine running
// Handler.Handle, with the context passed to it; with any other context it
// does nothing (fn never runs).
func AfterResponse(ctx context.Context, fn func()) {
	if l, ok := ctx.Value(loopKey{}).(*connLoop); ok {
		l.after = append(l.after, fn)
	}
}

// runAfter runs and clears the functions registered for the request just
// answered.
func (l *connLoop) runAfter() {
	for i, fn := range l.after {
		fn()
		l.after[i] = nil
	}
	l.after = l.after[:0]
}

package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// MaxUncompressedBytes bounds the decompressed size of one batch, so that a
// small malicious batch cannot make the broker allocate without limit.
const MaxUncompressedBytes = 256 << 20

var errTooBig = fmt.Errorf("%w: decompressed batch exceeds %d bytes", ErrInvalidRecord, MaxUncompressedBytes)

// decompress returns the decompressed record bytes of a batch. Errors wrap
// ErrInvalidRecord: the batch framing and CRC were fine, its content is not.
func decompress(codec int8, src []byte) ([]byte, error) {
	var (
		out []byte
		err error
	)
	switch codec {
	case CompressionGzip:
		out, err = readAll(func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }, src)
	case CompressionSnappy:
		out, err = unsnappy(src)
	case CompressionLz4:
		out, err = readAll(func(r io.Reader) (io.Reader, error) { return lz4.NewReader(r), nil }, src)
	case CompressionZstd:
		out, err = unzstd(src)
	default:
		return nil, fmt.Errorf("%w: unknown compression codec %d", ErrInvalidRecord, codec)
	}
	if err != nil {
		if errors.Is(err, ErrInvalidRecord) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: codec %d: %v", ErrInvalidRecord, codec, err)
	}
	return out, nil
}

// readAll streams src through a decoder, bounded by MaxUncompressedBytes.
func readAll(open func(io.Reader) (io.Reader, error), src []byte) ([]byte, error) {
	r, err := open(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	n, err := out.ReadFrom(io.LimitReader(r, MaxUncompressedBytes+1))
	if err != nil {
		return nil, err
	}
	if n > MaxUncompressedBytes {
		return nil, errTooBig
	}
	return out.Bytes(), nil
}

// zstdDecoders reuses zstd decoders, whose window buffers are the costly
// part of one (zstd.NewReader allocates them up front). Evidence: none of
// its own; it came with the broker's foundation (0dcc751) as the zstd
// package's documented way to decode many small frames, and no benchmark
// has measured it against a decoder per batch.
var zstdDecoders = sync.Pool{New: func() any {
	d, _ := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(MaxUncompressedBytes))
	return d
}}

func unzstd(src []byte) ([]byte, error) {
	d := zstdDecoders.Get().(*zstd.Decoder)
	defer zstdDecoders.Put(d)
	return d.DecodeAll(src, nil)
}

// xerialMagic starts snappy data framed the way the Java client writes it
// (snappy-java's SnappyOutputStream): 8 magic bytes, two int32 versions, then
// blocks of int32 length + raw snappy.
var xerialMagic = []byte{130, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderLen = 16

func unsnappy(src []byte) ([]byte, error) {
	if len(src) >= xerialHeaderLen && bytes.HasPrefix(src, xerialMagic) {
		return unxerial(src[xerialHeaderLen:])
	}
	return snappyBlock(nil, src)
}

func snappyBlock(dst, src []byte) ([]byte, error) {
	l, err := s2.DecodedLen(src)
	if err != nil {
		return nil, err
	}
	if l > MaxUncompressedBytes-len(dst) {
		return nil, errTooBig
	}
	out, err := s2.Decode(nil, src)
	if err != nil {
		return nil, err
	}
	return append(dst, out...), nil
}

func unxerial(src []byte) ([]byte, error) {
	var out []byte
	for len(src) > 0 {
		if len(src) < 4 {
			return nil, errors.New("truncated xerial block length")
		}
		n := binary.BigEndian.Uint32(src)
		src = src[4:]
		if uint64(n) > uint64(len(src)) {
			return nil, errors.New("xerial block exceeds data")
		}
		var err error
		if out, err = snappyBlock(out, src[:n]); err != nil {
			return nil, err
		}
		src = src[n:]
	}
	return out, nil
}

var zstdEncoders = sync.Pool{New: func() any {
	e, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
	return e
}}

// compress encodes record bytes with codec, the way Kafka clients do:
// gzip and lz4 frames, raw snappy blocks, zstd frames.
func compress(codec int8, src []byte) ([]byte, error) {
	switch codec {
	case CompressionGzip:
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		if _, err := w.Write(src); err != nil {
			return nil, fmt.Errorf("record: gzip: %w", err)
		}
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("record: gzip: %w", err)
		}
		return buf.Bytes(), nil
	case CompressionSnappy:
		return s2.EncodeSnappy(nil, src), nil
	case CompressionLz4:
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		if _, err := w.Write(src); err != nil {
			return nil, fmt.Errorf("record: lz4: %w", err)
		}
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("record: lz4: %w", err)
		}
		return buf.Bytes(), nil
	case CompressionZstd:
		e := zstdEncoders.Get().(*zstd.Encoder)
		defer zstdEncoders.Put(e)
		return e.EncodeAll(src, nil), nil
	}
	return nil, fmt.Errorf("%w: unknown compression codec %d", ErrInvalidRecord, codec)
}

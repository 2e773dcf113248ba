package wire

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Conn is the client side of one broker connection, for the brokers' own
// requests to each other (controller requests, follower fetches): the
// caller's goroutine writes one request and reads its response itself, with
// no goroutine in between (a general client hands each request and
// response over to goroutines of its own, a wake-up each way), and the
// encode and read buffers are reused. The byte fields of a decoded
// response (records, unknown tags) therefore alias the read buffer and are
// valid until the next request; strings are copied. Requests go out at
// the version they carry: the broker-to-broker versions are pinned by the
// caller, so no ApiVersions exchange precedes them. Requests may also be
// pipelined: Send writes one, Receive reads the answer to the oldest not yet
// read (the broker answers a connection's requests in order); Send and
// Receive may run on two goroutines, one each. Otherwise a Conn is not safe
// for concurrent use; after any error it must be closed.
type Conn struct {
	nc     net.Conn
	format *kmsg.RequestFormatter
	corr   int32 // of the last request sent (Send's)
	read   int32 // of the last response read (Receive's)
	wbuf   []byte
	// rbuf holds the last response's frame (its decoded byte fields alias
	// it), then rbuf[rnext:rend], bytes read past it: the start of the
	// next response, when requests are pipelined.
	rbuf        []byte
	rnext, rend int
	unwatch     func() bool // stops closing nc when the context ends
}

const (
	// MaxResponseBytes bounds a response frame (the socket.request.max.bytes
	// default of the other side).
	MaxResponseBytes = 100 << 20
	// keptBufferBytes: a buffer grown larger than this for one big request
	// or response is not kept for the next.
	keptBufferBytes = 16 << 20
	// readBufferBytes is the least a response is read with.
	readBufferBytes = 64 << 10
)

// Dial connects to addr within timeout (DialTCP: retransmissions capped at
// RetransmitMax). Ending ctx closes the connection, aborting a request in
// progress.
func Dial(ctx context.Context, addr, clientID string, timeout time.Duration) (*Conn, error) {
	nc, err := DialTCP(ctx, addr, timeout)
	if err != nil {
		return nil, err
	}
	return &Conn{
		nc:      nc,
		format:  kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)),
		unwatch: context.AfterFunc(ctx, func() { nc.Close() }),
	}, nil
}

// Close closes the connection.
func (c *Conn) Close() {
	c.unwatch()
	c.nc.Close()
}

// RoundTrip sends req and decodes its answer into resp (of the same key;
// its version is set to req's), both within timeout. No other request may
// be awaiting its answer.
func (c *Conn) RoundTrip(req kmsg.Request, resp kmsg.Response, timeout time.Duration) error {
	if err := c.Send(req, timeout); err != nil {
		return err
	}
	return c.Receive(req, resp, timeout)
}

// Send writes req within timeout; its answer is read by a later Receive.
func (c *Conn) Send(req kmsg.Request, timeout time.Duration) error {
	c.corr++
	c.wbuf = c.format.AppendRequest(c.wbuf[:0], req, c.corr)
	if cap(c.wbuf) > keptBufferBytes {
		defer func() { c.wbuf = nil }()
	}
	if err := c.nc.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	_, err := c.nc.Write(c.wbuf)
	return err
}

// Receive reads, within timeout, the answer to the oldest request sent and
// not yet answered, req, and decodes it into resp (of the same key; its
// version is set to req's).
func (c *Conn) Receive(req kmsg.Request, resp kmsg.Response, timeout time.Duration) error {
	if err := c.nc.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	buf, err := c.readFrame()
	if err != nil {
		return fmt.Errorf("wire: reading %s response: %w", kmsg.NameForKey(req.Key()), err)
	}
	c.read++
	if corr := int32(binary.BigEndian.Uint32(buf)); corr != c.read {
		return fmt.Errorf("wire: %s response with correlation id %d, expected %d", kmsg.NameForKey(req.Key()), corr, c.read)
	}
	body := buf[4:]
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != int16(kmsg.ApiVersions) { // ApiVersions answers with header v0
		r := kbin.Reader{Src: body}
		kmsg.SkipTags(&r)
		if !r.Ok() {
			return fmt.Errorf("wire: %s response header: bad tagged fields", kmsg.NameForKey(req.Key()))
		}
		body = r.Src
	}
	if err := resp.ReadFrom(body); err != nil {
		return fmt.Errorf("wire: decoding %s response: %w", kmsg.NameForKey(req.Key()), err)
	}
	return nil
}

// readFrame reads the next response frame and returns it without its size.
// The socket's bytes go straight into rbuf, the frame's size with the
// first of them: a buffered reader in between would copy every frame once
// more (a follower's records: 2% of the brokers' CPU in samsa-bench
// -replication), and reading the size alone would cost a system call per
// frame. Bytes read past the frame stay for the next call.
func (c *Conn) readFrame() ([]byte, error) {
	pending := c.rbuf[c.rnext:c.rend]
	buf := c.rbuf[:cap(c.rbuf)]
	if len(buf) < readBufferBytes || len(buf) > keptBufferBytes {
		buf = make([]byte, max(readBufferBytes, len(pending)))
	}
	n := copy(buf, pending) // to the front: only pipelined responses leave any
	c.rbuf, c.rnext, c.rend = buf, 0, 0
	var err error
	if n, err = c.readAtLeast(buf, n, 4); err != nil {
		return nil, err
	}
	size := int(int32(binary.BigEndian.Uint32(buf)))
	if size < 4 || size > MaxResponseBytes {
		return nil, fmt.Errorf("a frame of %d bytes", size)
	}
	if end := 4 + size; end > len(buf) {
		grown := make([]byte, end)
		copy(grown, buf[:n])
		buf = grown
		c.rbuf = buf
	}
	if n, err = c.readAtLeast(buf, n, 4+size); err != nil {
		return nil, err
	}
	c.rnext, c.rend = 4+size, n
	return buf[4 : 4+size], nil
}

// readAtLeast reads into buf[n:] until buf holds at least want bytes and
// returns how many it holds.
func (c *Conn) readAtLeast(buf []byte, n, want int) (int, error) {
	m, err := io.ReadAtLeast(c.nc, buf[n:], want-n)
	return n + m, err
}

// conn: the fetcher's connection to its leader. The fetcher goroutine
// writes one request and reads its response itself, with no goroutine in
// between (a general client hands each request and response over to
// goroutines of its own, which costs a wake-up each way on every fetch); the
// encode and read buffers are reused, so a decoded response aliases the read
// buffer (record batches are not copied) and is valid until the next
// request. Closing the connection, or ending the fetcher's context, aborts a
// request in progress.
package fetcher

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	dialTimeout = 10 * time.Second
	// maxResponseBytes bounds a response frame (the socket.request.max.bytes
	// default of the leader's side).
	maxResponseBytes = 100 << 20
	// keptBufferBytes: a read buffer grown larger than this for one big
	// response is not kept for the next.
	keptBufferBytes = 16 << 20
)

type conn struct {
	nc      net.Conn
	br      *bufio.Reader
	format  *kmsg.RequestFormatter
	corr    int32
	wbuf    []byte
	rbuf    []byte
	unwatch func() bool // stops closing nc when the context ends
}

func dialConn(ctx context.Context, addr, clientID string) (*conn, error) {
	d := net.Dialer{Timeout: dialTimeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &conn{
		nc: nc, br: bufio.NewReaderSize(nc, 64<<10),
		format:  kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)),
		unwatch: context.AfterFunc(ctx, func() { nc.Close() }),
	}, nil
}

func (c *conn) close() {
	c.unwatch()
	c.nc.Close()
}

// roundTrip sends req and decodes its answer into resp (of the same key and
// version), both within timeout.
func (c *conn) roundTrip(req kmsg.Request, resp kmsg.Response, timeout time.Duration) error {
	c.corr++
	c.wbuf = c.format.AppendRequest(c.wbuf[:0], req, c.corr)
	if err := c.nc.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	if _, err := c.nc.Write(c.wbuf); err != nil {
		return err
	}
	var sizeBuf [4]byte
	if _, err := io.ReadFull(c.br, sizeBuf[:]); err != nil {
		return err
	}
	size := int(int32(binary.BigEndian.Uint32(sizeBuf[:])))
	if size < 4 || size > maxResponseBytes {
		return fmt.Errorf("%s response of %d bytes", kmsg.NameForKey(req.Key()), size)
	}
	if cap(c.rbuf) < size || cap(c.rbuf) > keptBufferBytes {
		c.rbuf = make([]byte, size)
	}
	buf := c.rbuf[:size]
	if _, err := io.ReadFull(c.br, buf); err != nil {
		return err
	}
	if corr := int32(binary.BigEndian.Uint32(buf)); corr != c.corr {
		return fmt.Errorf("%s response with correlation id %d, expected %d", kmsg.NameForKey(req.Key()), corr, c.corr)
	}
	body := buf[4:]
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() {
		r := kbin.Reader{Src: body}
		kmsg.SkipTags(&r)
		if !r.Ok() {
			return fmt.Errorf("%s response header: bad tagged fields", kmsg.NameForKey(req.Key()))
		}
		body = r.Src
	}
	if err := resp.ReadFrom(body); err != nil {
		return fmt.Errorf("decoding %s response: %w", kmsg.NameForKey(req.Key()), err)
	}
	return nil
}

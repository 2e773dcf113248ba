package server

// Responses carrying file sections (issue 22): a Handler may answer with
// some bytes fields holding SectionPlaceholder and attach, with
// AttachSections, the Sections that fill them, in order, and a Locator
// that finds the placeholders in the encoded body. The response is still
// encoded by kmsg; the server then cuts each placeholder out, writes the
// field's length prefix for the section's length, and on the socket writes
// the encoded pieces with write and the sections with sendfile (at
// explicit offsets), so that record bytes never pass through user space.
//
// A section may be cut by a truncation while it is being sent (its
// Intact turns false): the server holds back the response's last byte
// until every section's bytes were read by the kernel (sendfile returned;
// a section that ends the response also had its own last byte, which is
// then the response's, read with pread) and every section is still intact;
// otherwise it closes the connection with the response unfinished, and
// the client retries on a new one. Only a plain TCP
// connection takes this path (SendsSections); a Handler attaches sections
// only when it does, and the server copies them into the frame otherwise.
//
// Sections are the server's once attached: it closes them when their
// response was written, dropped, or not made (handler error).

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// Section is a byte range of an open file that a response carries.
type Section interface {
	Len() int
	Fd() int       // read only at explicit offsets: pread, sendfile
	Offset() int64 // of the first byte in the file
	// Intact reports whether the file still holds the section's bytes.
	Intact() bool
	Close() error
}

// placeholder is the one value of every field a section fills.
var placeholder = []byte{0x5a}

// SectionPlaceholder is the value to put in a bytes field that a section
// fills: always the same slice (a Locator may recognise it by identity).
func SectionPlaceholder() []byte { return placeholder }

// IsSectionPlaceholder tells whether b is SectionPlaceholder's slice.
func IsSectionPlaceholder(b []byte) bool { return len(b) == 1 && &b[0] == &placeholder[0] }

// A Locator returns the positions in body (a response body as kmsg
// encoded it, at its version) of the placeholder byte of each section, in
// order.
type Locator func(body []byte) ([]int, error)

// errSectionChanged: a section's file changed before its response was
// complete.
var errSectionChanged = errors.New("server: a section's file changed under its response (truncation); closing the connection")

// SendsSections reports whether the connection of the request being
// handled (ctx from Handler.Handle) sends sections with sendfile.
func SendsSections(ctx context.Context) bool {
	l, ok := ctx.Value(loopKey{}).(*connLoop)
	return ok && l.rc != nil
}

// AttachSections hands secs, which the response to the request being
// handled carries at the placeholders locate finds, to the server. Called
// from the goroutine running Handler.Handle with its context; with any
// other context the sections are closed at once.
func AttachSections(ctx context.Context, secs []Section, locate Locator) {
	l, ok := ctx.Value(loopKey{}).(*connLoop)
	if !ok {
		closeSections(secs)
		return
	}
	l.secs = append(l.secs, secs...)
	l.locate = locate
}

func closeSections(secs []Section) {
	for _, s := range secs {
		s.Close()
	}
}

// cut is a section's place in a frame: its bytes go at buf[at:] (after the
// pieces before), before buf[at].
type cut struct {
	at  int
	sec Section
}

// frame is an encoded response ready to write: buf, with the sections'
// bytes at their cuts (none for most responses).
type frame struct {
	buf  []byte
	cuts []cut
	// later, if not nil, makes the frame when the writer reaches it
	// (later.go); buf and cuts are then empty.
	later *laterFrame
	// timing: the request's times, for the response phases (phase.go).
	timing timing
}

// size is the frame's size on the wire.
func (f frame) size() int {
	n := len(f.buf)
	for _, c := range f.cuts {
		n += c.sec.Len()
	}
	return n
}

// release returns the buffer and closes the sections; a Later frame
// dropped before the writer made it ends there.
func (f frame) release() {
	if f.later != nil {
		f.later.finish()
		return
	}
	releaseResponseBuffer(f.buf)
	for _, c := range f.cuts {
		c.sec.Close()
	}
}

// cutSections makes the frame of enc (a response frame as wire encodes
// it, whose body starts at bodyAt), which holds the placeholders of secs:
// each placeholder goes, and its length prefix says the section's length.
// compact: the bytes fields are compact (flexible versions). enc goes back
// to the pool; on error the sections are closed.
func cutSections(enc []byte, bodyAt int, compact bool, secs []Section, locate Locator) (frame, error) {
	defer releaseResponseBuffer(enc)
	pos, err := locate(enc[bodyAt:])
	if err == nil && len(pos) != len(secs) {
		err = fmt.Errorf("server: %d sections, %d placeholders", len(secs), len(pos))
	}
	if err != nil {
		closeSections(secs)
		return frame{}, err
	}
	out := getResponseBuffer()
	f := frame{cuts: make([]cut, 0, len(secs))}
	from := 0
	for i, p := range pos {
		p += bodyAt
		w := 4
		if compact {
			w = 1 // uvarint(1 + 1)
		}
		if p-w < from || p >= len(enc) || enc[p] != placeholder[0] || !placeholderPrefix(enc[p-w:p], compact) {
			closeSections(secs)
			releaseResponseBuffer(out)
			return frame{}, fmt.Errorf("server: no section placeholder at byte %d of the response", p)
		}
		out = append(out, enc[from:p-w]...)
		n := secs[i].Len()
		if compact {
			out = binary.AppendUvarint(out, uint64(n)+1)
		} else {
			out = binary.BigEndian.AppendUint32(out, uint32(n))
		}
		f.cuts = append(f.cuts, cut{at: len(out), sec: secs[i]})
		from = p + 1
	}
	f.buf = append(out, enc[from:]...)
	binary.BigEndian.PutUint32(f.buf, uint32(f.size()-4))
	return f, nil
}

func placeholderPrefix(b []byte, compact bool) bool {
	if compact {
		return b[0] == 2
	}
	return binary.BigEndian.Uint32(b) == 1
}

// materialize copies the sections into the frame's buffer: the frame as
// kmsg would have encoded it with the bytes in it.
func (f frame) materialize() ([]byte, error) {
	out := make([]byte, 0, f.size())
	from := 0
	for _, c := range f.cuts {
		out = append(out, f.buf[from:c.at]...)
		n := len(out)
		out = out[:n+c.sec.Len()]
		if err := preadFull(c.sec.Fd(), out[n:], c.sec.Offset()); err != nil {
			return nil, err
		}
		if !c.sec.Intact() {
			return nil, errSectionChanged
		}
		from = c.at
	}
	return append(out, f.buf[from:]...), nil
}

// encodeFrame encodes resp, with the sections the handler attached.
func (l *connLoop) encodeFrame(enc []byte, resp kmsg.Response) (frame, error) {
	secs, locate := l.secs, l.locate
	l.secs, l.locate = nil, nil
	if len(secs) == 0 {
		return frame{buf: enc}, nil
	}
	f, err := cutSections(enc, wire.ResponseHeaderLen(resp), resp.IsFlexible(), secs, locate)
	if err != nil || l.rc != nil {
		return f, err
	}
	// No sendfile here: the bytes go in the frame.
	b, err := f.materialize()
	f.release()
	return frame{buf: b}, err
}

// dropSections closes the sections attached to a request that gets no
// response.
func (l *connLoop) dropSections() {
	closeSections(l.secs)
	l.secs, l.locate = nil, nil
}

// rawConnOf is the connection's syscall.RawConn if it is a plain TCP
// connection (nil otherwise: anything wrapping the socket, as TLS would,
// must see every byte).
func rawConnOf(nc net.Conn) syscall.RawConn {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// preadFull reads len(p) bytes of fd at off.
func preadFull(fd int, p []byte, off int64) error {
	for n := 0; n < len(p); {
		m, err := syscall.Pread(fd, p[n:], off+int64(n))
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return fmt.Errorf("server: read section: %w", err)
		case m == 0:
			return errSectionChanged // the file ends before the section: truncated
		}
		n += m
	}
	return nil
}

// sendfile sends n bytes of infd from off on the socket rc with
// sendfile(2), waiting for room as a net.Conn write does (the write
// deadline holds).
func sendfile(rc syscall.RawConn, infd int, off int64, n int) error {
	var serr error
	err := rc.Write(func(fd uintptr) bool {
		for n > 0 {
			m, err := syscall.Sendfile(int(fd), infd, &off, min(n, 1<<30)) // advances off
			switch {
			case err == syscall.EAGAIN:
				return false // wait until writable
			case err == syscall.EINTR:
				continue
			case err != nil:
				serr = fmt.Errorf("server: sendfile: %w", err)
				return true
			case m == 0:
				serr = errSectionChanged // the file ends before the section: truncated
				return true
			}
			n -= m
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("server: sendfile: %w", err)
	}
	return serr
}

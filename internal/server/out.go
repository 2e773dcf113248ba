package server

// The connection's output: encoded responses go out in request order. When
// nothing is queued or being written, the handling goroutine writes a
// response itself, at once (a hand-over to another goroutine costs a
// scheduler round trip, often a thread wake-up, on every response);
// otherwise it queues it for the writer goroutine, which writes what is
// queued and flushes when the queue is empty. Either way a response buffer
// goes back to the pool once written, and the 64 KiB write buffer, taken
// from a pool for each write, goes back once flushed: an idle connection
// holds none.

import (
	"bufio"
	"errors"
	"sync"
	"time"
)

var writerPool sync.Pool // *bufio.Writer of ioBufferSize

type output struct {
	l *connLoop

	mu     sync.Mutex
	queue  []frame
	busy   bool  // a goroutine is writing
	closed bool  // no more responses: the writer drains the queue and stops
	err    error // the first write error; everything later is dropped
	kick   chan struct{}
	room   chan struct{} // the writer took the queue: a full one has room again
}

func newOutput(l *connLoop) *output {
	return &output{l: l, kick: make(chan struct{}, 1), room: make(chan struct{}, 1)}
}

func (o *output) signal() {
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// send writes b now if the output is idle, else queues it, waiting while
// queueDepth responses are queued already (a peer that does not read its
// responses holds up its requests, not our memory). It reports false once
// writing has failed or the connection is cancelled.
func (o *output) send(b frame) bool {
	o.mu.Lock()
	for len(o.queue) >= queueDepth && o.err == nil {
		o.mu.Unlock()
		select {
		case <-o.room:
		case <-o.l.ctx.Done():
			b.release()
			return false
		}
		o.mu.Lock()
	}
	if o.err != nil || o.closed {
		o.mu.Unlock()
		b.release()
		return false
	}
	if o.busy || len(o.queue) > 0 || b.later != nil { // a Later frame is the writer goroutine's
		o.queue = append(o.queue, b)
		o.mu.Unlock()
		o.signal()
		return true
	}
	o.busy = true
	o.mu.Unlock()
	err := o.write([]frame{b})
	return o.done(err)
}

// done ends a write: records err, hands what was queued meanwhile to the
// writer goroutine.
func (o *output) done(err error) bool {
	o.mu.Lock()
	o.busy = false
	if err != nil && o.err == nil {
		o.err = err
	}
	failed, more := o.err != nil, len(o.queue) > 0 || o.closed
	o.mu.Unlock()
	if more {
		o.signal()
	}
	if failed {
		switch {
		case errors.Is(err, errSectionChanged):
			o.l.log.Info("a truncation changed the records of a response being sent; closing the connection", "err", err)
		case o.l.ctx.Err() == nil:
			o.l.log.Debug("writing response failed; closing connection", "err", err)
		}
		o.l.cancel()
	}
	return !failed
}

// write writes frames and flushes, returning each buffer to the pool and
// closing the sections.
func (o *output) write(frames []frame) error {
	bw, ok := writerPool.Get().(*bufio.Writer)
	if ok {
		bw.Reset(o.l.c.nc)
	} else {
		bw = bufio.NewWriterSize(o.l.c.nc, ioBufferSize)
	}
	defer func() {
		bw.Reset(nil) // nothing of this connection's stays in the pool
		writerPool.Put(bw)
	}()
	var err error
	var sent sentFrames // response phases (phase.go)
	for _, f := range frames {
		if lf := f.later; lf != nil {
			// The responses before it go out now, not after its wait.
			if err == nil && bw.Buffered() > 0 {
				err = bw.Flush()
			}
			if err == nil {
				sent.flushed(o.l.s.metrics)
			}
			if err != nil { // nothing more goes out: its wait is moot
				lf.finish()
				continue
			}
			var ok bool
			f, ok = lf.run()
			lf.finish()
			if !ok { // nothing to answer
				continue
			}
		}
		if err == nil {
			sent.start(f.timing)
			o.deadline()
			if len(f.cuts) == 0 {
				_, err = bw.Write(f.buf)
			} else {
				err = o.writeSections(bw, f)
			}
		}
		f.release()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		o.l.c.touch()
		sent.flushed(o.l.s.metrics)
	}
	return err
}

// close lets the writer goroutine write what is queued and stop.
func (o *output) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.signal()
}

// run is the writer goroutine: it writes what the handling goroutine
// queued, until closed and drained, or a write fails.
func (o *output) run() {
	for range o.kick {
		for {
			o.mu.Lock()
			if o.busy { // the writing goroutine signals again when done
				o.mu.Unlock()
				break
			}
			bufs := o.queue
			o.queue = nil
			if len(bufs) == 0 || o.err != nil {
				stop := o.closed || o.err != nil
				o.mu.Unlock()
				for _, b := range bufs {
					b.release()
				}
				if stop {
					return
				}
				break
			}
			o.busy = true
			o.mu.Unlock()
			select {
			case o.room <- struct{}{}:
			default:
			}
			if !o.done(o.write(bufs)) {
				return
			}
		}
	}
}

func (o *output) deadline() {
	o.l.c.nc.SetWriteDeadline(time.Now().Add(o.l.s.cfg.IdleTimeout))
}

// writeSections writes a frame with sections (sections.go): the pieces of
// its buffer through bw, the sections with sendfile. The response's last
// byte is written only once every section's bytes were read and every
// section is still intact: a truncation meanwhile ends the connection with
// the response unfinished (errSectionChanged). That byte is the last piece's
// (a flexible response's tags, the partitions after the section); only when
// a section ends the frame is its own last byte held back, read with pread
// once sendfile has returned.
func (o *output) writeSections(bw *bufio.Writer, f frame) error {
	var last [1]byte
	held := false // last holds the final section's last byte
	from := 0
	for i, c := range f.cuts {
		if _, err := bw.Write(f.buf[from:c.at]); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		n := c.sec.Len()
		held = i == len(f.cuts)-1 && c.at == len(f.buf)
		if held {
			n--
		}
		o.deadline()
		if err := sendfile(o.l.rc, c.sec.Fd(), c.sec.Offset(), n); err != nil {
			return err
		}
		if held {
			if err := preadFull(c.sec.Fd(), last[:], c.sec.Offset()+int64(n)); err != nil {
				return err
			}
		}
		if !c.sec.Intact() {
			return errSectionChanged
		}
		from = c.at
	}
	for _, c := range f.cuts { // the bytes of every section were read
		if !c.sec.Intact() {
			return errSectionChanged
		}
	}
	o.deadline()
	if held {
		if err := bw.WriteByte(last[0]); err != nil {
			return err
		}
	}
	_, err := bw.Write(f.buf[from:])
	return err
}

package server

// Answers completed after the handler returns (Later). Kafka's broker
// handles one request of a connection at a time and reads the next only
// once the response is sent, so a producer's pipelined produce requests
// (the Java producer keeps up to five in flight) each wait behind the
// acks=-1 replication wait of the one before. Here a produce handler
// appends, then hands that wait to Later: the connection goes on with the
// next requests of the same API key, whose appends follow in request order,
// while the connection's writer goroutine waits. Responses still go out in
// request order (clients match them by it), and a request of any other key
// is handled only once every Later answer before it is complete, so
// whatever it reads (a high watermark, a committed offset) is what it would
// read after those responses, as with Kafka.

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// laterFrame is the place in the output of a response that Later
// completes. The writer goroutine, reaching it in order, runs run, which
// waits for the handler's finish and encodes the response (false: nothing
// to answer); done is called once, when run returned or the frame was
// dropped (the output failed or closed before it).
type laterFrame struct {
	run  func() (frame, bool)
	done func()
	once sync.Once
}

func (lf *laterFrame) finish() { lf.once.Do(lf.done) }

// Later asks that the response the handler is about to return be
// completed by finish, which the connection's writer goroutine runs once
// the handler has returned and the responses before it are written; finish
// reports false if there is nothing to answer (the connection is closing).
// Later itself reports false, and the handler must then call finish
// itself, outside a server connection or when the response carries
// sections (AttachSections). A handler calls it at most once.
func Later(ctx context.Context, finish func() bool) bool {
	l, ok := ctx.Value(loopKey{}).(*connLoop)
	if !ok || len(l.secs) > 0 || l.later != nil {
		return false
	}
	l.later = finish
	return true
}

// answerLater queues the place of in's response; the writer goroutine
// completes it with finish when it reaches it (out.go), so the answers go
// out in order and the goroutine woken by the end of finish's wait is the
// one that writes. handled is when the handler returned, from which the
// wait counts as the request's remote phase (phase.go). It reports
// whether the connection stays open.
func (l *connLoop) answerLater(in inbound, resp kmsg.Response, finish func() bool, handled time.Time) bool {
	l.laterKey = in.hdr.Key
	l.c.inFlight.Add(1)
	l.laters.Add(1)
	lf := &laterFrame{done: func() {
		l.c.inFlight.Add(-1)
		l.laters.Done()
	}}
	lf.run = func() (frame, bool) {
		ok, err := l.runFinish(finish)
		done := time.Now()
		l.s.metrics.observe(in.hdr.Key, done.Sub(in.read))
		l.s.metrics.observePhase(in.hdr.Key, phaseRemote, done.Sub(handled))
		if err != nil { // as a handler's: nothing answered, the connection closes
			l.logHandlerError(in, err)
			l.cancel()
			return frame{}, false
		}
		if !ok || resp == nil {
			return frame{}, false
		}
		l.s.metrics.countErrors(in.hdr.Key, resp)
		buf := wire.AppendResponse(getResponseBuffer(), in.hdr, resp)
		return frame{buf: buf, timing: timing{key: in.hdr.Key, read: in.read, ready: time.Now()}}, true
	}
	return l.out.send(frame{later: lf})
}

// runFinish runs finish, recovering a panic as callHandler does.
func (l *connLoop) runFinish(finish func() bool) (ok bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			ok, err = false, fmt.Errorf("%w: %v\n%s", errPanic, p, debug.Stack())
		}
	}()
	return finish(), nil
}

// awaitLaters waits, before in is handled, for the Later answers before it
// unless in is of their key.
func (l *connLoop) awaitLaters(in inbound) {
	if in.err == nil && in.hdr.Key == l.laterKey {
		return
	}
	l.drainLaters()
}

// drainLaters waits until every Later answer queued is complete.
func (l *connLoop) drainLaters() {
	l.laters.Wait()
	l.laterKey = -1
}

package server

import "time"

// Client quota throttling (KIP-219): a handler that throttles a client
// calls Conn.Throttle; once the response is sent (for a request without
// one, once it is handled; for a Later answer, once it is complete,
// nothing being handled meanwhile) the connection is muted for that long,
// as Kafka mutes the client's channel: the handling loop handles nothing
// more and the reader reads no further frame until the throttle has
// passed. A frame the reader had already begun waiting for is read and
// queued, and handled once the mute ends.

// Throttle mutes the connection for d after the response to the request
// being handled; the longest of several calls wins. A nil Conn (handler
// tests) ignores it. Only the handling goroutine calls it.
func (c *Conn) Throttle(d time.Duration) {
	if c != nil && d > c.throttle {
		c.throttle = d
	}
}

// RequestSize is the size of the request being handled, its frame without
// the length prefix (Kafka's request.sizeInBytes): what producer_byte_rate
// counts. 0 on a nil Conn.
func (c *Conn) RequestSize() int {
	if c == nil {
		return 0
	}
	return c.requestSize
}

// mute starts the throttle the handler asked for, if any.
func (l *connLoop) mute() {
	if d := l.c.throttle; d > 0 {
		l.c.throttle = 0
		l.c.mutedUntil.Store(time.Now().Add(d).UnixNano())
		l.s.metrics.throttled.Observe(d.Seconds())
	}
}

// waitUnmuted waits out a mute; false if the connection ends first.
func (l *connLoop) waitUnmuted() bool {
	until := l.c.mutedUntil.Load()
	if until == 0 { // never throttled: no clock read per request
		return true
	}
	d := time.Until(time.Unix(0, until))
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.ctx.Done():
		return false
	}
}

// Package server is the broker's TCP front end: it accepts connections,
// reads Kafka request frames, hands each decoded request to a Handler and
// writes the responses back. It is a thin shell: framing and decoding live in
// package wire, request semantics in the Handler.
//
// Invariants:
//   - On one connection requests are handled one at a time, in arrival
//     order, as Kafka does; responses are written in that same order. A
//     handler may leave its response to be completed after it returns
//     (Later: a produce's acks=-1 wait); requests of the same key are then
//     handled meanwhile, any other only once it is complete (later.go).
//     Reading and decoding the next frames overlaps with handling (a queue of
//     queueDepth decoded requests). A response is written by the handling
//     goroutine itself when the output is idle, else queued (up to
//     queueDepth) for the writer goroutine (out.go).
//   - Hot buffers are reused (buffers.go): produce frames, response frames,
//     and whatever a Handler releases with AfterResponse.
//   - A response may carry file sections (sections.go): on a plain TCP
//     connection they go out with sendfile between the kmsg-encoded
//     pieces, and the response's last byte only once every section was
//     read and is intact (else the connection closes); on any other
//     connection they are copied into the frame.
//   - Bad input (oversized or negative frame size, a frame that does not
//     decode, unknown key, unsupported version) closes only that connection,
//     with one Warn log line. ApiVersions at an unsupported version is the
//     exception: it is answered with a v0 UNSUPPORTED_VERSION body, as Kafka
//     does, and the connection stays open.
//   - A Handler error or panic closes only that connection.
//   - A handler may throttle its client (Conn.Throttle, client quotas,
//     KIP-219): once the response is sent the connection is muted, reading
//     and handling nothing more until the throttle has passed
//     (throttle.go). Other connections are not affected.
//   - A connection with no request in flight and no traffic for IdleTimeout
//     is closed (Kafka's connections.max.idle.ms).
//   - Every accepted connection has its TCP retransmission timeout capped
//     (wire.RetransmitMax) before anything is read from it.
//
// Goroutines: Serve runs the accept loop in the caller's goroutine. Each
// connection owns three goroutines (reader, the handling loop, writer), all
// started and waited for by the connection's own goroutine, which Server
// tracks. A Later answer's wait runs on the writer goroutine when it
// reaches that answer, so the connection ends once it is over. Close stops
// accepting, cancels every handler context, closes every connection and
// waits for all of them; a Handler must return once its context is
// cancelled.
package server

// Package api turns Kafka requests into calls on the broker's domain objects
// and builds the responses: one file per API key, named after the key as in
// franz-go's kfake (00_produce.go, 01_fetch.go, ...), each opening with the
// versions it serves and how it behaves.
//
// Protocol errors travel in the response as Kafka error codes (kerr); a Go
// error is returned only when the connection must close. Domain errors are
// mapped to codes in one place, errors.go.
//
// Client quotas (quota.go): Handle records each client request against
// the quota manager (Config.Quotas) and throttles it: throttle_time_ms in
// the response and a muted connection (server.Conn.Throttle).
//
// Goroutines: none of its own; handlers run on the server's per-connection
// goroutine and may block (Fetch long polling, acks=all Produce) until their context ends.
package api

// Package quota is the deterministic core of Kafka's client quotas
// (ClientQuotaManager with its DefaultQuotaCallback): sampled rates over
// quota.window.num windows of quota.window.size.seconds, the throttle time
// QuotaUtils.throttleTime computes from a violation, and the precedence of
// quota entities (user, client-id and their <default>s).
//
// Entities are named as Kafka's ZooKeeper layout names them: sanitized
// names (Sanitize), "<default>" (Default) for the default entity, "" for
// a component the entity does not have.
//
// Parked (park.go) lets the code serving a request, in any package, mark
// the waits that are not the request's time for request_percentage.
//
// Invariants: time enters as an argument; a Manager holds no goroutines and
// does no I/O; it is safe for concurrent use (one mutex).
package quota

// Package broker wires one Samsa broker together: configuration, the log
// manager, the partitions hosted here, the request handlers and the listener.
// It owns the start and stop order: storage opens before the listener
// accepts, and the listener closes before storage flushes and writes its
// clean-shutdown marker.
//
// Readiness: the listener opens before the broker registers (its bound port
// goes into the registration), but clients are served only once it has
// registered and applied an UpdateMetadata sent for that registration
// (api/ready.go, metacache/ready.go); a lost session or a stall past the
// session timeout (stall.go) makes it unready until it has registered again.
//
// Groups: the group coordinator (internal/group) is wired in groups.go: its
// log is the __consumer_offsets partitions this broker leads, and
// LeaderAndIsr and StopReplica (control.go) tell it which those are.
//
// Goroutines: the listener's accept loop (server package) and the log
// manager's background loop (retention, flush, delayed deletion), and the
// group coordinator's Run (its timers and offset expiry); Close stops them
// and waits for them. keepSession re-registers after a session ends;
// watchStalls beats the cache's stall detection.
package broker

// Package broker wires one Samsa broker together: configuration, the log
// manager, the partitions hosted here, the request handlers and the listener.
// It owns the start and stop order: storage opens before the listener
// accepts, and the listener closes before storage flushes and writes its
// clean-shutdown marker.
//
// Goroutines: the listener's accept loop (server package) and the log
// manager's background loop (retention, flush, delayed deletion); Close stops
// both and waits for them.
package broker

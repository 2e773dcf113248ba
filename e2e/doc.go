// Package e2e runs the samsa binary as real processes and drives it with
// real Kafka clients: crashes (SIGKILL), torn writes, restarts.
package e2e

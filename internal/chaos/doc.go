// Package chaos is Samsa's fault campaign: a cluster of real samsa
// processes (a 3-member store and several brokers), each in its own network
// namespace, driven by idempotent and plain acks=all producers and by
// consumers while faults ("nemeses") chosen from a seed are applied and
// healed; afterwards a checker reads every partition back and compares it
// with what was acknowledged.
//
// Layers, one way: history.go is the pure checker (no I/O); netns.go drives
// ip(8) and tc(8); procs.go starts and signals processes; cluster.go lays
// out the store and the brokers; nemesis.go chooses and applies faults;
// traffic.go runs the clients; campaign.go ties them into a run and a
// report. cmd/samsa-chaos is the command; e2e runs a short profile.
package chaos

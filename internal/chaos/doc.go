// Package chaos is Samsa's fault campaign: a cluster of real samsa
// processes (a 3-member store and several brokers), each in its own network
// namespace, driven by idempotent and plain acks=all producers, consumers,
// a committing consumer group and admin traffic (topics created and
// deleted, partitions reassigned) while faults ("nemeses") chosen from a
// seed are applied and healed; afterwards checkers read every partition
// back and compare it with what was acknowledged, compare the replicas'
// bytes, replay the store's whole history for split brain and fencing,
// and look for deleted topics left anywhere.
//
// Layers, one way: history.go and storehist.go's CheckStoreHistory are
// pure checkers (no I/O); netns.go drives ip(8) and tc(8); procs.go starts
// and signals processes; cluster.go lays out the store and the brokers;
// nemesis.go chooses and applies faults; traffic.go and topics.go run the
// clients; campaign.go ties them into a run and a report.
// cmd/samsa-chaos is the command; e2e/campaign runs the short profile.
package chaos

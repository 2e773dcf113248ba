// Package broker wires one Samsa broker together: configuration, the log
// manager, the partitions hosted here, the request handlers and the listener.
// It owns the start and stop order: storage opens before the listener
// accepts, and the listener closes before storage flushes and writes its
// clean-shutdown marker.
//
// Listeners: every entry of `listeners` is bound by its own server.Server
// (one handler behind them all); the registration carries every advertised
// listener, a bound address filling in an advertised host or port left
// out. Clients are answered with the addresses of the listener they came
// in on (api/03_metadata.go); fetchers and the transaction coordinator's
// clients use inter.broker.listener.name, the controller channel,
// AlterPartition and controlled shutdown control.plane.listener.name
// (else the inter-broker listener), as Kafka. The listener keys are
// per-broker dynamic (listeners.go): listeners are bound and closed, and
// the registration rewritten, at run time.
//
// Readiness: the listeners open before the broker registers (their bound
// ports go into the registration), but clients are served only once it has
// registered and applied an UpdateMetadata sent for that registration
// (api/ready.go, metacache/ready.go); a lost session or a stall past the
// session timeout (stall.go) makes it unready until it has registered again.
//
// Groups: the group coordinator (internal/group) is wired in groups.go: its
// log is the __consumer_offsets partitions this broker leads, and
// LeaderAndIsr, StopReplica and UpdateMetadata (control.go) tell it which
// those are and which partitions were deleted.
//
// Transactions: the transaction coordinator (internal/txn) is wired in
// txn.go: its log is the __transaction_state partitions this broker
// leads (LeaderAndIsr and StopReplica tell it which), its markers go to
// the partitions' leaders over a kgo client per broker (txnClients), and
// txn_verify.go answers the partitions' KIP-890 questions (api.TxnVerifier).
//
// Goroutines. Start runs these through goRun; Close cancels their context,
// ends the store session, closes the listener and waits for them all:
//   - the log manager's background loop (storage.Manager.Run: retention,
//     flush, high-watermark checkpoints, delayed deletion);
//   - the producer id manager (producerid.Manager.Run: claims blocks of
//     producer ids from the store ahead of need);
//   - the group coordinator (group.Coordinator.Run: the groups' timers and
//     offset expiry; it waits for the partition loads and write waits it
//     started, which end with it);
//   - the transaction coordinator (txn.Coordinator.Run: aborts of
//     timed-out transactions and expiry of transactional ids; it waits for
//     the partition loads and the marker senders it started — one goroutine
//     per transaction being completed — and then its clients are closed);
//   - each listener's accept loop (server.Server.Serve), which runs three
//     goroutines per connection: its handling loop, a frame reader and a
//     response writer;
//   - the controller's event loop (controller.Loop.Run), which itself runs
//     the store watch feeding it and, with auto.leader.rebalance.enable, the
//     rebalance ticker;
//   - the topic-config watch (watchTopicConfigs);
//   - the client quota watches (watchQuotas, quotas.go: one for
//     /config/users, one for /config/clients), which feed quota.Manager
//     (the quotas stored are applied before the broker registers);
//   - the ISR shrink check (shrinkISRs, Kafka's isr-expiration task);
//   - the session keeper (keepSession: re-registers after the store
//     session ends);
//   - the stall watch (watchStalls: beats the cache's stall detection and
//     ends a session that a stall has outlived).
//
// Started by the packages broker wires, and stopped by Close after those
// above have returned: the follower fetchers (fetcher.Manager,
// num.replica.fetchers goroutines per leader broker followed, fewer when
// a fetcher has no partition), the AlterPartition sender
// (alterpartition.Manager, one), and the controller's channels to brokers
// (channel.Manager, per broker a goroutine that dials and writes and, per
// connection, one that reads the answers, while this broker is the
// controller). CreateTopics and DeleteTopics requests handle their topics
// on a goroutine each (internal/api), within the request. An external
// store's client (etcdstore) keeps its session alive and its watches
// running on goroutines of its own, closed with it.
package broker

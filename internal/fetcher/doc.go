// Package fetcher replicates follower partitions from their leaders: Kafka's
// ReplicaFetcherManager and ReplicaFetcherThread.
//
// num.replica.fetchers (Config.NumFetchers, default 1) fetcher goroutines
// run per source (leader) broker, as Kafka's fetcher threads: a partition
// goes to fetcher id abs(31*topic.hashCode() + partition) % N (Kafka's
// getFetcherId, with Java's String.hashCode; assign.go). Each fetcher
// multiplexes its partitions over a connection of its own (client id
// broker-<id>-fetcher-<fetcherId>), which its goroutine writes and reads
// itself (wire.Conn), in a fetch session of its own, to the address
// Config.BrokerAddr gives before every request (a leader may come back
// elsewhere). A fetcher whose last partition leaves stops.
//
// Manager.Resize changes N at run time (the dynamic config, as Kafka's
// resizeThreadPool): the partitions whose fetcher id changes leave their
// fetcher and join the new one in the fetch state they had (a Fetching
// partition goes on from its log end offset, neither truncated nor
// refetched; a backoff runs on), through the same hand-over under the
// Manager's and then each fetcher's lock as AddPartitions; fetchers left
// empty stop.
//
// Each partition is Truncating, then Fetching (Kafka's PartitionFetchState):
//   - Truncating (after every (re)target): OffsetForLeaderEpoch for the
//     partition's latest epoch, then truncation to the leader's end offset
//     for it (KIP-101); when the leader answers with an epoch this replica
//     does not know, truncation goes to the end of our largest smaller epoch
//     and asks again about that one (KIP-279). A partition with no epoch at
//     all drops what it holds and refetches.
//   - Fetching: Fetch v12 from the log end offset, in an incremental fetch
//     session (KIP-227, session.go): after the opening full fetch, a request
//     lists only the partitions whose fetch state changed, so an idle
//     follower sends and receives next to nothing, whatever its partition
//     count. Whole batches are appended (a partial trailing batch is cut
//     off), then the leader's high watermark is adopted. OFFSET_OUT_OF_RANGE
//     below the leader's log start restarts the log there; otherwise (or on
//     a diverging epoch) the partition goes back to Truncating. Leadership
//     errors back the partition off, 20ms at first, doubling up to
//     Config.Backoff (a new leader is often a few milliseconds from applying
//     its LeaderAndIsr); a failed request backs off the whole fetcher,
//     reconnects and fetches in full.
//   - Fenced: FENCED_LEADER_EPOCH (the leader is at a newer epoch than our
//     target) stops the partition until AddPartitions re-targets it, as
//     Kafka's markPartitionFailed: asking again could only be fenced again.
//
// Invariant: after RemovePartitions (or AddPartitions or Resize moving a
// partition to another fetcher) returns, the old fetcher makes no further call on that
// partition: responses are applied under the fetcher's mutex, and only to the
// partition state object the request was built for.
//
// The per-partition decisions (truncation offset, error handling, batch
// trimming) are pure functions in state.go.
package fetcher

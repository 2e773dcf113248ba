// Package storage keeps partition logs on disk in Kafka's layout and runs
// the log manager.
//
// Layout: <logdir>/<topic>-<partition>/ holds segments %020d.log (batches as
// stored after offset assignment), %020d.index (8-byte entries: int32
// relative offset, int32 position, one per index.interval.bytes, keyed on a
// batch's last offset), %020d.timeindex (12-byte entries: int64 max
// timestamp so far, int32 relative offset), %020d.txnindex (aborted
// transactions, Kafka's format, txnindex.go) and %020d.snapshot (producer
// state), plus partition.metadata and
// leader-epoch-checkpoint ("0\n<n>\n<epoch> <startOffset>\n"...). Each log
// dir holds recovery-point-offset-checkpoint, replication-offset-checkpoint
// (high watermarks), .kafka_cleanshutdown after a clean Close, and .lock
// (flock) while open, cleaner-offset-checkpoint once a log was
// compacted, and log-start-offset-checkpoint (logs whose start was raised
// above their first segment's base). Checkpoints are written atomically (temp file, fsync,
// rename). Deleted partitions are renamed
// <topic>-<partition>.<uuid>-delete and removed after file.delete.delay.ms;
// stray ones (a partition the broker no longer holds a replica of, found
// on its disk: MarkStray) are renamed <topic>-<partition>.<uuid>-stray and
// removed the same way (KRaft's stray logs, KAFKA-14616).
//
// Invariants:
//   - Nothing is opened at startup but the directory listings: a Log loads
//     on first use, and a manager-wide LRU (fdCache) bounds the open segment
//     descriptors; evicted segments drop their in-memory indexes and reopen
//     transparently. Index entries are appended to their files as they are
//     made, so a reopened index matches memory.
//   - After an unclean shutdown a log, when first loaded, rescans every
//     segment from its recovery point with CRC checks, truncates at the first
//     bad batch and rebuilds the indexes; a clean load still CRC-checks the
//     active segment's tail past its last index entry. Missing or corrupt
//     index files are rebuilt whenever a segment opens.
//   - A retention pass loads a log only if its files show something to
//     delete (retentionDue: directory listing, .log sizes and mtimes, last
//     .timeindex entry, the active segment's batch headers if it has no
//     time index entry); it never misses what a loaded pass would delete.
//   - The segment.ms clock of a segment is Kafka's rollingBasedTimestamp:
//     the max timestamp of its first batch (re-read from the file after a
//     restart), else the .log mtime; while this process appends to it, the
//     wall-clock time since its first append counts too.
//   - Creation is lazy (lazy.go): Create and CreateMany register logs in
//     memory and write nothing. Such a log answers as an empty log at offset
//     0 with its topic id; its first Append or AppendAsFollower makes its
//     directory, partition.metadata and first segment durable, then appends.
//     Retention, flushes, checkpoints and Close skip lazy logs, Delete only
//     forgets them, and after a restart they are absent: the broker
//     re-creates every partition it hosts from LeaderAndIsr.
//   - A loaded log always has at least one segment; the last one is active.
//     A lazy log has none.
//   - Leader epochs (epoch.go, epochlog.go): each log keeps Kafka's
//     LeaderEpochFileCache, sorted (epoch, startOffset) entries.
//     AppendAsLeader stamps PartitionLeaderEpoch into every batch and
//     records a new epoch at its first offset; AppendAsFollower records each
//     newer epoch found in the batches; AssignEpochStartOffset is the new
//     leader's; EndOffsetForEpoch answers OffsetForLeaderEpoch. The
//     checkpoint is rewritten on every change, an assignment before the
//     data it covers; loading trims it to [log start, log end] and rebuilds
//     it from the batch headers if missing or corrupt. A lazy log keeps it
//     in memory until materialized.
//   - Truncation (truncate.go): TruncateTo drops the batches from the one
//     holding an offset on (a straddling batch goes whole); later segments
//     are deleted, the cut segment's indexes are cut to match and it becomes
//     active, all fsynced before returning so no restart brings the data
//     back; the epoch cache is truncated from the end, the high watermark
//     and recovery point clamped. TruncateFullyAndStartAt restarts the log
//     empty at an offset. Retention moving the log start truncates the
//     epoch cache from the start and raises the high watermark to it.
//   - The log start offset (logstart.go) is max(logStart, first segment's
//     base), within [first base, high watermark] when raised: reads below
//     it are out of range; IncrementLogStartOffset (DeleteRecords, a
//     follower taking the leader's) raises it, the next retention pass
//     deletes the segments wholly below it under any cleanup policy, a
//     full truncation restarts it; persisted with the high watermarks.
//   - High watermarks (hw.go) live in the Log, within [log start, log end]
//     once loaded; the manager reads replication-offset-checkpoint at open
//     and writes the dirs whose values changed every
//     HighWatermarkCheckpointInterval, in RunOnce and at Close, from memory
//     only: logs never loaded keep their value, lazy logs are left out.
//   - Idempotent producers (producerstate.go, producersnapshot.go,
//     producerlog.go): per log, Kafka's ProducerStateManager. AppendAsLeader
//     checks each batch with a producer id under the append lock before
//     writing (a retry of one of the producer's last 5 batches returns the
//     original's offsets with AppendInfo.Duplicate and writes nothing);
//     both append paths update the state after the write. The state is
//     nil for a log nobody produced to idempotently. %020d.snapshot files
//     (Kafka's format, a row per remembered batch, CRC-32C) are written on
//     every roll (empty if no producer) and at a clean close, the newest
//     two kept; loading reads the newest valid one at or below the log end
//     and replays the batch headers after it (a corrupt one is logged and
//     deleted), so the state matches the log after kill -9 too. Truncation
//     deletes the snapshots above the new end and reloads; retention
//     deletes those below the new log start; producers idle for
//     producer.id.expiration.ms are dropped by Manager.ExpireProducers.
//   - Transactions (txn.go the rules, txnlog.go, txnindex.go): the
//     producer state also tracks each producer's open transaction (from
//     its first transactional batch to its marker) and the completed ones
//     whose marker the high watermark has not passed; LastStableOffset is
//     the high watermark capped by the first offset of the oldest of
//     those, never below the log start. AppendTxnMarker appends a
//     COMMIT/ABORT control batch as leader after Kafka's checks
//     (ErrInvalidProducerEpoch, ErrCoordinatorFenced); clients' control
//     batches are refused. Aborts are indexed in %020d.txnindex files
//     (Kafka's format), fsynced per entry, held in memory by marker
//     offset, cut by truncation and retention, rebuilt from the log after
//     an unclean shutdown or when a file is corrupt. KIP-890 verification
//     guards (in memory, per producer): AppendVerified opens a transaction
//     only with the producer's guard from StartTxnVerification, which a
//     marker appended in between drops.
//   - Log compaction (Kafka's LogCleaner; cleanrules.go the decisions as
//     pure functions, cleantxn.go the transactions a pass walks through,
//     cleanlog.go and cleanbatch.go a pass, cleanswap.go the swap,
//     cleaner.go the threads, offsetmap.go the key map): a log
//     whose cleanup.policy holds compact is cleaned when its dirty ratio
//     (bytes from the cleaner checkpoint to the first uncleanable
//     segment over all non-active bytes) reaches min.cleanable.dirty.ratio
//     or max.compaction.lag.ms forces it, or when tombstones kept by the
//     last pass reached their delete horizon (remembered in memory). The
//     dirty section ends at the
//     active segment, the first segment above the last stable offset
//     (never cleaned beyond, as Kafka) and the
//     first holding a record newer than min.compaction.lag.ms; a pass maps
//     as much of it as log.cleaner.dedupe.buffer.size holds, then rewrites
//     every segment from the log start to there, grouped within
//     segment.bytes and segment.index.bytes: a record stays if it has a
//     key and no later offset of its key is mapped, a tombstone until the
//     delete horizon (cleaning time + delete.retention.ms) stamped in its
//     batch the first time it was cleaned (KIP-534). Batches keep their
//     base and last offsets, producer fields and codec (gaps appear, no
//     offset changes); an emptied batch that is its producer's newest is
//     kept empty. Transactions (Kafka's CleanedTransactionMetadata): the
//     map skips control batches and aborted data (known from the
//     .txnindex), a pass drops aborted data; a marker stays while a batch
//     of its transaction is left, then its batch gets a delete horizon
//     (now + delete.retention.ms) and it goes once that passed (a
//     producer's markers stay if it has no batch remembered); the
//     .txnindex entries of markers in cleaned segments whose data is all
//     gone are dropped under Log.mu before the swap's commit point (safe
//     either way: nothing of theirs is left to filter), the files staying
//     where they are. Output is <base>.log.cleaned, swapped in under Log.mu
//     only if no truncation, retention or deletion changed the segments
//     (truncation and deletion pause cleaning: a pass aborts at the next
//     batch and they wait for it); the swap's steps (a .swapend marker,
//     rename to .log.swap as the commit point, old files deleted, rename
//     to .log) are finished or rolled back by recoverSwaps when the log
//     loads. The cleaned segment's indexes are rebuilt when it is first
//     opened. cleaner-offset-checkpoint (Kafka's format) holds each log's
//     first dirty offset; truncation lowers it. Producer snapshots and
//     the leader-epoch cache are left as they are: both stay valid over a
//     log whose offsets do not move. Only the delete policy lets
//     retention delete segments. AppendAsLeader refuses records without a
//     key on a compacted log (record.ErrInvalidRecord).
//   - Log dir failure (offline.go, Kafka's LogDirFailureChannel): an I/O
//     error of a write path (append, roll, flush, truncation, epoch and
//     offset checkpoints, cleaning, retention) takes the log's dir offline
//     once; its logs then refuse reads and writes with ErrKafkaStorage, the
//     manager writes nothing more there and places no new log there, and
//     ManagerConfig.OnDirFailure is called on the failing goroutine. Only a
//     restart brings the dir back.
//   - Sections (section.go): ReadSection returns Read's batches as a
//     range of a segment file on a dup'd descriptor of its own, pinning
//     nothing; every change of bytes in place (truncation) first bumps the
//     log's generation, which a section checks (Intact) once read.
//   - Lock order: Log.cleanMu, then Log.mu, then segment.mu, then
//     fdCache.mu.
//
// Goroutines: none, except Manager.Run (retention, flush, high watermark
// checkpoint and producer expiration tickers, and log.cleaner.threads
// cleaner goroutines if enabled, waited for before Run returns), which the
// caller starts and stops through its context. ReconfigureCleaner
// (cleanerconfig.go, Kafka's LogCleaner.reconfigure) stops the cleaner
// goroutines — a pass in progress aborts before its swap — waits for
// them, and Run starts them again with the new settings. Everything else runs on the caller's goroutine;
// RunOnce(now) is the deterministic unit that tests drive.
package storage

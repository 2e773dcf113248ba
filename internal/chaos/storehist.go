package chaos

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// StoreEvent is one change in the store's history (keys without the
// cluster's chroot).
type StoreEvent struct {
	Rev     int64
	Key     string
	Value   []byte
	Deleted bool
}

// historyEnd is the key StoreHistory writes to mark the end of a run.
const historyEnd = "/chaos/history-end"

// StoreHistory reads every change the store ever applied under s's
// chroot, in revision order. The campaign's store keeps 24 hours of
// history, so nothing is compacted away during a run.
func StoreHistory(ctx context.Context, s metastore.Store) ([]StoreEvent, error) {
	// A marker written now ends the history: the watch replays from
	// revision 1 in batches, each stamped with the store's current
	// revision, so that stamp says nothing of how far the replay is.
	res, err := s.Txn(ctx, nil, []metastore.Op{metastore.Put(historyEnd, nil)})
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out []StoreEvent
	for resp := range s.WatchPrefix(wctx, "/", 1) {
		if resp.Err != nil {
			return out, resp.Err
		}
		for _, e := range resp.Events {
			if e.KV.Key == historyEnd {
				if e.KV.Version >= res.Revision {
					return out, nil
				}
				continue
			}
			out = append(out, StoreEvent{Rev: e.KV.Version, Key: e.KV.Key, Value: e.KV.Value, Deleted: e.Type == metastore.EventDelete})
		}
	}
	return out, fmt.Errorf("store history ended before revision %d: %w", res.Revision, ctx.Err())
}

// CheckStoreHistory finds split brain and fencing failures in the store's
// history:
//
//   - /controller_epoch only ever grows, by one (two brokers never claim
//     the same epoch), and each epoch is written while /controller names
//     its one owner;
//   - every partition state the history changes carries the controller
//     epoch current at that revision (a deposed controller's write that
//     got through would carry an older one), and per partition the leader
//     epoch and the partition epoch never go backwards.
//
// It returns the violations and, for the report, the epochs and their
// owners in order.
func CheckStoreHistory(events []StoreEvent) (violations, epochs []string) {
	var (
		epoch   int32 = -1
		owner   int32 = -1
		prevRow       = map[Partition]metadata.LeaderAndIsr{}
	)
	for i, e := range events {
		switch {
		case e.Key == metadata.ControllerKey:
			if e.Deleted {
				owner = -1
				continue
			}
			id, err := metadata.DecodeController(e.Value)
			if err != nil {
				violations = append(violations, fmt.Sprintf("rev %d: undecodable /controller %q", e.Rev, e.Value))
				continue
			}
			owner = id
		case e.Key == metadata.ControllerEpochKey && !e.Deleted:
			// The same transaction may set /controller after this event.
			owner := ownerAt(events, i, owner)
			n, err := strconv.ParseInt(strings.TrimSpace(string(e.Value)), 10, 32)
			if err != nil {
				violations = append(violations, fmt.Sprintf("rev %d: undecodable /controller_epoch %q", e.Rev, e.Value))
				continue
			}
			if epoch >= 0 && int32(n) != epoch+1 {
				violations = append(violations, fmt.Sprintf("rev %d: controller epoch %d follows %d", e.Rev, n, epoch))
			}
			if owner < 0 {
				violations = append(violations, fmt.Sprintf("rev %d: controller epoch %d written with no /controller", e.Rev, n))
			}
			epoch = int32(n)
			epochs = append(epochs, fmt.Sprintf("%d:b%d", n, owner))
		default:
			topic, chunk, ok := metadata.ParseTopicsKey(e.Key)
			if !ok || chunk < 0 {
				continue
			}
			if e.Deleted {
				for p := range prevRow {
					if p.Topic == topic && metadata.ChunkOf(p.Partition) == chunk {
						delete(prevRow, p)
					}
				}
				continue
			}
			entries, err := metadata.DecodeStateChunk(e.Value)
			if err != nil {
				violations = append(violations, fmt.Sprintf("rev %d: undecodable state chunk %s: %v", e.Rev, e.Key, err))
				continue
			}
			for _, se := range entries {
				p := Partition{topic, se.Partition}
				prev, had := prevRow[p]
				prevRow[p] = se.State
				if had && sameState(prev, se.State) {
					continue
				}
				if se.State.ControllerEpoch != epoch {
					violations = append(violations, fmt.Sprintf("rev %d: %s written with controller epoch %d while the epoch is %d",
						e.Rev, p, se.State.ControllerEpoch, epoch))
				}
				if had && (se.State.LeaderEpoch < prev.LeaderEpoch || se.State.PartitionEpoch <= prev.PartitionEpoch) {
					violations = append(violations, fmt.Sprintf("rev %d: %s went from leader epoch %d, partition epoch %d to %d, %d",
						e.Rev, p, prev.LeaderEpoch, prev.PartitionEpoch, se.State.LeaderEpoch, se.State.PartitionEpoch))
				}
			}
		}
	}
	return violations, epochs
}

// ownerAt is the /controller owner once every event of events[i]'s
// revision is applied.
func ownerAt(events []StoreEvent, i int, owner int32) int32 {
	for j := i + 1; j < len(events) && events[j].Rev == events[i].Rev; j++ {
		if events[j].Key != metadata.ControllerKey {
			continue
		}
		if events[j].Deleted {
			owner = -1
		} else if id, err := metadata.DecodeController(events[j].Value); err == nil {
			owner = id
		}
	}
	return owner
}

func sameState(a, b metadata.LeaderAndIsr) bool {
	return a.Leader == b.Leader && a.LeaderEpoch == b.LeaderEpoch && a.ControllerEpoch == b.ControllerEpoch &&
		a.PartitionEpoch == b.PartitionEpoch && slices.Equal(a.ISR, b.ISR)
}

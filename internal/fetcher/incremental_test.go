package fetcher

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// sessionCluster is a fake leader with fetch sessions and n partitions, each
// with two records, and a follower manager fetching all of them, caught up
// and idle.
func sessionCluster(t *testing.T, n int) (*fakeLeader, map[kafka.TopicPartition]*fakeLog, map[kafka.TopicPartition]*fakeLog, *Manager) {
	t.Helper()
	leaders, followers := map[kafka.TopicPartition]*fakeLog{}, map[kafka.TopicPartition]*fakeLog{}
	var ts []Target
	for i := range int32(n) {
		l := &fakeLog{}
		l.write(1, "a", "b")
		l.setHW(2)
		leaders[tpN(i)], followers[tpN(i)] = l, &fakeLog{}
		ts = append(ts, target(tpN(i), 1, 1, followers[tpN(i)]))
	}
	h := newFakeLeader(1, leaders)
	h.sessions = true
	book := serveAsBroker1(t, h)
	m := newTestManager(t, book, &syncBuffer{}, 0)
	m.AddPartitions(ts)
	waitAllCaughtUp(t, followers, leaders)
	// The fetch after the records arrived lists every partition again (its
	// fetch offset changed), and may reach the leader after the follower's
	// logs caught up: the session is settled once a fetch lists nothing.
	waitFor(t, "an idle session fetch", func() bool {
		l := h.listedSince(0)
		return len(l) > 0 && l[len(l)-1] == 0
	})
	return h, leaders, followers, m
}

func waitAllCaughtUp(t *testing.T, followers, leaders map[kafka.TopicPartition]*fakeLog) {
	t.Helper()
	waitFor(t, "every partition caught up", func() bool {
		for tp, l := range leaders {
			if f := followers[tp]; f == nil || !caughtUp(f, l) {
				return false
			}
		}
		return true
	})
}

// In a fetch session a follower lists only what changed: after the opening
// fetch, adding one partition or appending to one lists that one alone,
// never the twenty others again.
func TestIncrementalFetchListsOnlyChanges(t *testing.T) {
	h, leaders, followers, m := sessionCluster(t, 20)
	since := len(h.listedSince(0))

	added, f := &fakeLog{}, &fakeLog{}
	added.write(1, "x")
	added.setHW(1)
	h.mu.Lock()
	h.logs[tpN(20)] = added // h.logs is leaders: written under the leader's lock only
	h.mu.Unlock()
	followers[tpN(20)] = f
	m.AddPartitions([]Target{target(tpN(20), 1, 1, f)})
	waitAllCaughtUp(t, followers, leaders)

	leaders[tpN(3)].write(1, "c")
	leaders[tpN(3)].setHW(3)
	h.notify()
	waitAllCaughtUp(t, followers, leaders)

	listed := h.listedSince(since)
	if len(listed) == 0 || slices.Max(listed) > 1 {
		t.Fatalf("partitions listed per fetch after the session opened: %v, want at most 1", listed)
	}
}

// A leader that lost the session (restart) answers FETCH_SESSION_ID_NOT_FOUND;
// the follower opens a new one with a full fetch and goes on replicating.
func TestFetchSessionLostFetchesInFull(t *testing.T) {
	h, leaders, followers, _ := sessionCluster(t, 5)
	since := len(h.listedSince(0))
	h.dropSessions()
	for _, l := range leaders {
		l.write(1, "c")
		l.setHW(3)
	}
	h.notify()
	waitAllCaughtUp(t, followers, leaders)
	if listed := h.listedSince(since); !slices.Contains(listed, 5) {
		t.Fatalf("partitions listed per fetch after the session was lost: %v, want a full fetch of 5", listed)
	}
}

// A leader refusing a partition because it does not know its leader epoch
// yet (it has not applied the LeaderAndIsr) is asked again well before
// replica.fetch.backoff.ms.
func TestLeaderNotReadyRetriedSoon(t *testing.T) {
	leader := &fakeLog{}
	leader.write(2, "a")
	leader.setHW(1)
	follower := &fakeLog{}
	h := newFakeLeader(1, map[kafka.TopicPartition]*fakeLog{tp0: leader})
	book := serveAsBroker1(t, h)
	logs := &syncBuffer{}
	m := NewManager(Config{NodeID: followerID, BrokerAddr: book.lookup, MaxWait: 50 * time.Millisecond,
		Backoff: time.Hour, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	t.Cleanup(m.Close)
	m.AddPartitions([]Target{target(tp0, 1, 2, follower)})
	waitFor(t, "refused as an unknown epoch", func() bool {
		return strings.Contains(logs.String(), "UNKNOWN_LEADER_EPOCH")
	})
	h.setEpoch(2)
	waitFor(t, "caught up once the leader knows its epoch", func() bool { return caughtUp(follower, leader) })
}

// A partition backing off rejoins the fetch when its backoff ends, though
// the fetch of the others long-polls much longer (replica.fetch.wait.max.ms).
func TestBackedOffPartitionRejoinsLongPoll(t *testing.T) {
	idle, idleF := &fakeLog{}, &fakeLog{}
	idle.write(1, "a")
	idle.setHW(1)
	late, lateF := &fakeLog{}, &fakeLog{}
	late.write(1, "b")
	late.setHW(1)
	h := newFakeLeader(1, map[kafka.TopicPartition]*fakeLog{tpN(0): idle}) // tpN(1) unknown at first
	h.sessions = true
	book := serveAsBroker1(t, h)
	logs := &syncBuffer{}
	m := NewManager(Config{NodeID: followerID, BrokerAddr: book.lookup, MaxWait: time.Minute, Backoff: time.Hour,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	t.Cleanup(m.Close)
	m.AddPartitions([]Target{target(tpN(0), 1, 1, idleF), target(tpN(1), 1, 1, lateF)})
	waitFor(t, "refused as unknown", func() bool { return strings.Contains(logs.String(), "UNKNOWN_TOPIC_OR_PARTITION") })
	h.mu.Lock()
	h.logs[tpN(1)] = late // no notify: nothing wakes the parked fetch
	h.mu.Unlock()
	waitFor(t, "late partition caught up", func() bool { return caughtUp(lateF, late) })
}

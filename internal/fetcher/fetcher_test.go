// End-to-end tests: a Manager replicating from fake leaders served over TCP
// by internal/server into in-memory follower logs.
package fetcher

import (
	"bytes"
	"log/slog"
	"time"

	"slices"
	"strings"
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

var tp0 = kafka.TopicPartition{Topic: "t", Partition: 0}

func target(tp kafka.TopicPartition, leader, epoch int32, p Partition) Target {
	return Target{TP: tp, Leader: leader, LeaderEpoch: epoch, Partition: p}
}

// A follower with a divergent suffix (epoch 2, which the leader never had) is
// truncated to the end of epoch 1 on the leader, no further, then fetches the
// rest byte-identical in answers cut mid-batch; the high watermark follows.
func TestTruncatesDivergentSuffixThenFetches(t *testing.T) {
	leader := &fakeLog{}
	leader.write(1, "a", "b", "c")
	leader.write(1, "d", "e")
	leader.write(3, "f", "g", "h")
	leader.write(3, "i", "j", "k", "l")
	leader.setHW(10)
	follower := &fakeLog{}
	follower.write(1, "a", "b", "c")
	follower.write(1, "d", "e")
	follower.write(2, "x", "y")

	h := newFakeLeader(3, map[kafka.TopicPartition]*fakeLog{tp0: leader})
	book := serveAsBroker1(t, h)
	m := newTestManager(t, book, &syncBuffer{}, 100) // < two batches: answers end mid-batch
	m.AddPartitions([]Target{target(tp0, 1, 3, follower)})

	waitFor(t, "follower caught up", func() bool { return caughtUp(follower, leader) })
	truncs, resets, _, _ := follower.stats()
	if slices.Min(truncs) != 5 || len(resets) != 0 {
		t.Fatalf("truncations %v resets %v, want down to 5 exactly", truncs, resets)
	}
	asked, _, _, bad := h.stats()
	if asked[0] != 2 || bad != 0 {
		t.Fatalf("asked epochs %v, bad replica ids %d", asked, bad)
	}

	leader.write(3, "m")
	leader.setHW(13)
	h.notify()
	waitFor(t, "new record and high watermark", func() bool { return caughtUp(follower, leader) })
}

// KIP-279: the leader answers with epoch 2, which the follower never had;
// the follower truncates to the end of its epoch 1 and asks again about it.
func TestTruncationAsksAgainAboutOlderEpoch(t *testing.T) {
	leader := &fakeLog{}
	leader.write(1, "a", "b")
	leader.write(2, "c", "d")
	leader.write(4, "e", "f", "g", "h")
	leader.setHW(8)
	follower := &fakeLog{}
	follower.write(1, "a", "b")
	follower.write(3, "x", "y", "z")

	h := newFakeLeader(4, map[kafka.TopicPartition]*fakeLog{tp0: leader})
	book := serveAsBroker1(t, h)
	m := newTestManager(t, book, &syncBuffer{}, 0)
	m.AddPartitions([]Target{target(tp0, 1, 4, follower)})

	waitFor(t, "follower caught up", func() bool { return caughtUp(follower, leader) })
	truncs, _, _, _ := follower.stats()
	asked, _, _, _ := h.stats()
	if slices.Min(truncs) != 2 || !slices.Equal(asked, []int32{3, 1}) {
		t.Fatalf("truncations %v, asked epochs %v; want down to 2, asking 3 then 1", truncs, asked)
	}
}

// A follower without any epoch drops what it holds and refetches it.
func TestNoEpochRefetchesEverything(t *testing.T) {
	leader := &fakeLog{}
	leader.write(1, "a", "b")
	leader.setHW(2)
	follower := &fakeLog{}
	follower.write(-1, "q", "r", "s") // batches without a leader epoch

	h := newFakeLeader(1, map[kafka.TopicPartition]*fakeLog{tp0: leader})
	book := serveAsBroker1(t, h)
	m := newTestManager(t, book, &syncBuffer{}, 0)
	m.AddPartitions([]Target{target(tp0, 1, 1, follower)})
	waitFor(t, "follower caught up", func() bool { return caughtUp(follower, leader) })
}

// A fetch offset below the leader's log start restarts the log there.
func TestOffsetOutOfRangeRestartsAtLeaderLogStart(t *testing.T) {
	leader := &fakeLog{}
	leader.TruncateFullyAndStartAt(10)
	leader.write(5, "a", "b")
	leader.setHW(12)
	follower := &fakeLog{}

	h := newFakeLeader(5, map[kafka.TopicPartition]*fakeLog{tp0: leader})
	book := serveAsBroker1(t, h)
	m := newTestManager(t, book, &syncBuffer{}, 0)
	m.AddPartitions([]Target{target(tp0, 1, 5, follower)})
	waitFor(t, "follower caught up", func() bool { return caughtUp(follower, leader) })
	if _, start, _ := follower.state(); start != 10 {
		t.Fatalf("follower log start %d, want 10", start)
	}
}

// One fetcher serves both partitions of a leader in the same requests; after
// RemovePartitions returns, the removed one is never touched again while the
// other keeps replicating; the fetcher stops with its last partition.
func TestRemovePartitionsStopsAppends(t *testing.T) {
	tp1 := kafka.TopicPartition{Topic: "u", Partition: 1}
	l0, l1 := &fakeLog{}, &fakeLog{}
	l0.write(1, "a")
	l1.write(1, "b")
	l0.setHW(1)
	l1.setHW(1)
	f0, f1 := &fakeLog{}, &fakeLog{}

	h := newFakeLeader(1, map[kafka.TopicPartition]*fakeLog{tp0: l0, tp1: l1})
	book := serveAsBroker1(t, h)
	m := newTestManager(t, book, &syncBuffer{}, 0)
	m.AddPartitions([]Target{target(tp0, 1, 1, f0), target(tp1, 1, 1, f1)})
	waitFor(t, "both caught up", func() bool { return caughtUp(f0, l0) && caughtUp(f1, l1) })
	if _, _, parts, _ := h.stats(); parts != 2 || m.fetcherCount() != 1 {
		t.Fatalf("%d partitions per fetch, %d fetchers; want 2 and 1", parts, m.fetcherCount())
	}

	m.RemovePartitions([]kafka.TopicPartition{tp0})
	f0.forbid()
	before := f0.bytes()
	l0.write(1, "c")
	l0.setHW(2)
	l1.write(1, "d")
	l1.setHW(2)
	h.notify()
	waitFor(t, "remaining partition caught up", func() bool { return caughtUp(f1, l1) })
	if _, _, _, late := f0.stats(); late != 0 || !bytes.Equal(f0.bytes(), before) {
		t.Fatalf("%d calls on the removed partition", late)
	}

	m.mu.Lock()
	f := m.fetchers[fetcherKey{leader: 1}]
	m.mu.Unlock()
	m.RemovePartitions([]kafka.TopicPartition{tp1})
	if n := m.fetcherCount(); n != 0 {
		t.Fatalf("%d fetchers without partitions", n)
	}
	waitFor(t, "idle fetcher goroutine gone", func() bool {
		select {
		case <-f.done:
			return true
		default:
			return false
		}
	})
}

// Re-targeting to a new leader moves the partition to that leader's fetcher
// (the old one stops) and truncates what the new leader never had.
func TestRetargetToNewLeader(t *testing.T) {
	la := &fakeLog{}
	la.write(1, "a", "b", "c")
	la.write(1, "z") // never reached broker 2
	la.setHW(4)
	lb := &fakeLog{}
	lb.write(1, "a", "b", "c")
	lb.write(2, "d", "e")
	lb.setHW(5)
	follower := &fakeLog{}

	ha := newFakeLeader(1, map[kafka.TopicPartition]*fakeLog{tp0: la})
	hb := newFakeLeader(2, map[kafka.TopicPartition]*fakeLog{tp0: lb})
	addrA, _ := ha.serve(t)
	addrB, _ := hb.serve(t)
	book := &addrBook{}
	book.set(1, addrA)
	book.set(2, addrB)
	m := newTestManager(t, book, &syncBuffer{}, 0)
	m.AddPartitions([]Target{target(tp0, 1, 1, follower)})
	waitFor(t, "caught up with broker 1", func() bool { return caughtUp(follower, la) })

	ha.setEpoch(2) // broker 1 was deposed
	m.AddPartitions([]Target{target(tp0, 2, 2, follower)})
	if n := m.fetcherCount(); n != 1 {
		t.Fatalf("%d fetchers, want 1", n)
	}
	waitFor(t, "caught up with broker 2", func() bool { return caughtUp(follower, lb) })
	if truncs, _, _, _ := follower.stats(); slices.Min(truncs) != 3 {
		t.Fatalf("truncations %v, want down to 3", truncs)
	}
}

// A fenced epoch stops the partition without touching the log: nothing more
// is asked about it (Kafka's markPartitionFailed), not even after many
// backoffs, until a re-target, even one naming the same epoch again; the
// re-target with the current epoch replicates.
func TestFencedEpochWaitsForRetarget(t *testing.T) {
	leader := &fakeLog{}
	leader.write(4, "a")
	leader.write(5, "b")
	leader.setHW(2)
	follower := &fakeLog{}
	follower.write(4, "a")
	h := newFakeLeader(5, map[kafka.TopicPartition]*fakeLog{tp0: leader})
	book := serveAsBroker1(t, h)
	m := newTestManager(t, book, &syncBuffer{}, 0)
	m.AddPartitions([]Target{target(tp0, 1, 4, follower)})
	waitFor(t, "fenced", func() bool { _, fenced, _, _ := h.stats(); return fenced >= 1 })
	time.Sleep(300 * time.Millisecond) // 15 backoffs of the test manager
	if _, fenced, _, _ := h.stats(); fenced != 1 {
		t.Fatalf("fenced %d times, want once: a fenced partition waits for a re-target", fenced)
	}
	if truncs, resets, appends, _ := follower.stats(); len(truncs)+len(resets)+appends != 0 {
		t.Fatalf("fenced follower changed its log: %v %v %d", truncs, resets, appends)
	}
	m.AddPartitions([]Target{target(tp0, 1, 4, follower)}) // the same target: asked again
	waitFor(t, "fenced again", func() bool { _, fenced, _, _ := h.stats(); return fenced >= 2 })
	m.AddPartitions([]Target{target(tp0, 1, 5, follower)})
	waitFor(t, "follower caught up", func() bool { return caughtUp(follower, leader) })
}

// An unknown, then unreachable leader is retried; once it is back on a new
// address the follower catches up.
func TestLeaderUnreachableThenBack(t *testing.T) {
	leader := &fakeLog{}
	leader.write(1, "a")
	leader.setHW(1)
	follower := &fakeLog{}
	h := newFakeLeader(1, map[kafka.TopicPartition]*fakeLog{tp0: leader})
	book := &addrBook{}
	logs := &syncBuffer{}
	m := newTestManager(t, book, logs, 0)
	m.AddPartitions([]Target{target(tp0, 1, 1, follower)})
	failures := func() int { return strings.Count(logs.String(), "request failed") }
	waitFor(t, "unknown address retried", func() bool { return failures() >= 2 })

	addr, stop := h.serve(t)
	book.set(1, addr)
	waitFor(t, "caught up", func() bool { return caughtUp(follower, leader) })

	stop()
	n := failures()
	waitFor(t, "unreachable leader retried", func() bool { return failures() >= n+2 })
	leader.write(1, "b")
	leader.setHW(2)
	addr2, _ := h.serve(t)
	book.set(1, addr2)
	waitFor(t, "caught up after restart", func() bool { return caughtUp(follower, leader) })
}

// A fetch the leader never answers is given up after MaxWait plus
// replica.socket.timeout.ms (SocketTimeout): the connection is dropped and
// the fetch sent again on a new one, and the follower catches up. At the
// default 30 s the follower would still be waiting when waitFor gives up.
func TestUnansweredFetchGivenUpAfterSocketTimeout(t *testing.T) {
	leader := &fakeLog{}
	leader.write(1, "a", "b")
	leader.setHW(2)
	follower := &fakeLog{}
	h := newFakeLeader(1, map[kafka.TopicPartition]*fakeLog{tp0: leader})
	h.stall = 1
	addr, _ := h.serve(t)
	book := &addrBook{}
	book.set(1, addr)
	logs := &syncBuffer{}
	m := NewManager(Config{NodeID: followerID, BrokerAddr: book.lookup, MaxWait: 50 * time.Millisecond,
		Backoff: 20 * time.Millisecond, SocketTimeout: 200 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	t.Cleanup(m.Close)
	m.AddPartitions([]Target{target(tp0, 1, 1, follower)})
	waitFor(t, "caught up past the unanswered fetch", func() bool { return caughtUp(follower, leader) })
	if !strings.Contains(logs.String(), "request failed") {
		t.Fatalf("no failed request logged:\n%s", logs.String())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stall != 0 {
		t.Fatalf("the leader was never sent a fetch to leave unanswered")
	}
}

// MaxLag is the leader's high watermark less the follower's log end, as of
// the last answer: here the fake leader tells a high watermark 3 offsets
// past the records it gives (as a leader does whose answers the byte
// limits cut short), then gives them.
func TestMaxLag(t *testing.T) {
	leader := &fakeLog{}
	leader.write(1, "a", "b", "c", "d", "e")
	leader.setHW(8)
	follower := &fakeLog{}
	h := newFakeLeader(1, map[kafka.TopicPartition]*fakeLog{tp0: leader})
	book := serveAsBroker1(t, h)
	m := newTestManager(t, book, &syncBuffer{}, 1<<20)
	if lag := m.MaxLag(); lag != 0 {
		t.Fatalf("lag %d before any partition", lag)
	}
	m.AddPartitions([]Target{target(tp0, 1, 1, follower)})
	waitFor(t, "a lag of 3", func() bool { return m.MaxLag() == 3 })
	leader.write(1, "f", "g", "h")
	h.notify()
	waitFor(t, "no lag", func() bool { return m.MaxLag() == 0 })
	if _, _, leo := follower.state(); leo != 8 {
		t.Fatalf("follower ends at %d, want 8", leo)
	}
}

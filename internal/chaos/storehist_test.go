package chaos

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/embedetcd"
	"github.com/samsa-kafka/samsa/internal/metastore/etcdstore"
)

// history builds store events: controller(rev, id), epoch(rev, n),
// state(rev, topic, rows...).
type histBuilder struct{ ev []StoreEvent }

func (h *histBuilder) controller(rev int64, id int32) *histBuilder {
	h.ev = append(h.ev, StoreEvent{Rev: rev, Key: metadata.ControllerKey,
		Value: []byte(`{"version":1,"brokerid":` + itoa(id) + `,"timestamp":"1"}`)})
	return h
}

func (h *histBuilder) resign(rev int64) *histBuilder {
	h.ev = append(h.ev, StoreEvent{Rev: rev, Key: metadata.ControllerKey, Deleted: true})
	return h
}

func (h *histBuilder) epoch(rev int64, n int32) *histBuilder {
	h.ev = append(h.ev, StoreEvent{Rev: rev, Key: metadata.ControllerEpochKey, Value: []byte(itoa(n))})
	return h
}

func (h *histBuilder) state(rev int64, topic string, rows ...metadata.StateEntry) *histBuilder {
	h.ev = append(h.ev, StoreEvent{Rev: rev, Key: metadata.StateChunkKey(topic, 0), Value: metadata.EncodeStateChunk(rows)})
	return h
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func row(p, leader, leaderEpoch, ctrlEpoch, partEpoch int32, isr ...int32) metadata.StateEntry {
	return metadata.StateEntry{Partition: p, State: metadata.LeaderAndIsr{Leader: leader, LeaderEpoch: leaderEpoch,
		ISR: isr, ControllerEpoch: ctrlEpoch, PartitionEpoch: partEpoch}}
}

func TestCheckStoreHistory(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    *histBuilder
		want []string // substrings of the violations, in order; none: clean
	}{
		{"two tenures, fenced writes", new(histBuilder).
			controller(2, 1).epoch(3, 1).state(4, "t", row(0, 1, 0, 1, 0, 1, 2), row(1, 2, 0, 1, 0, 2, 1)).
			resign(5).controller(6, 2).epoch(7, 2).
			// partition 1 unchanged keeps epoch 1; partition 0 rewritten under epoch 2
			state(8, "t", row(0, 2, 1, 2, 1, 2), row(1, 2, 0, 1, 0, 2, 1)), nil},
		{"zombie write after the next epoch", new(histBuilder).
			controller(2, 1).epoch(3, 1).state(4, "t", row(0, 1, 0, 1, 0, 1, 2)).
			resign(5).controller(6, 2).epoch(7, 2).
			state(8, "t", row(0, 1, 0, 1, 1, 1)),
			[]string{"rev 8: t-0 written with controller epoch 1 while the epoch is 2"}},
		{"epoch claimed twice", new(histBuilder).
			controller(2, 1).epoch(3, 1).epoch(4, 1),
			[]string{"rev 4: controller epoch 1 follows 1"}},
		{"epoch without a controller", new(histBuilder).
			controller(2, 1).epoch(3, 1).resign(4).epoch(5, 2),
			[]string{"rev 5: controller epoch 2 written with no /controller"}},
		{"leader epoch backwards", new(histBuilder).
			controller(2, 1).epoch(3, 1).state(4, "t", row(0, 1, 3, 1, 5, 1)).state(5, "t", row(0, 1, 2, 1, 6, 1)),
			[]string{"rev 5: t-0 went from leader epoch 3, partition epoch 5 to 2, 6"}},
		{"deleted and recreated topic starts over", new(histBuilder).
			controller(2, 1).epoch(3, 1).state(4, "t", row(0, 1, 3, 1, 5, 1)).
			h(StoreEvent{Rev: 5, Key: metadata.StateChunkKey("t", 0), Deleted: true}).
			state(6, "t", row(0, 1, 0, 1, 0, 1)), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := CheckStoreHistory(tc.h.ev)
			if len(got) != len(tc.want) {
				t.Fatalf("violations %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("violation %d: %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func (h *histBuilder) h(e StoreEvent) *histBuilder { h.ev = append(h.ev, e); return h }

func TestStoreLeftovers(t *testing.T) {
	ev := []StoreEvent{
		{Rev: 1, Key: metadata.TopicKey("chaos-churn-1"), Value: []byte("{}")},
		{Rev: 2, Key: metadata.StateChunkKey("chaos-churn-1", 0), Value: []byte("{}")},
		{Rev: 3, Key: metadata.TopicKey("chaos-churn-2"), Value: []byte("{}")},
		{Rev: 4, Key: metadata.DeleteTopicKey("chaos-churn-2"), Value: []byte("")},
		{Rev: 5, Key: metadata.TopicKey("chaos-churn-1"), Deleted: true},
		{Rev: 5, Key: metadata.StateChunkKey("chaos-churn-1", 0), Deleted: true},
		{Rev: 6, Key: metadata.TopicKey("chaos"), Value: []byte("{}")},
	}
	got := StoreLeftovers(ev)
	want := []string{"store: /admin/delete_topics/chaos-churn-2 left after the topic's deletion",
		"store: /brokers/topics/chaos-churn-2 left after the topic's deletion"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestFirstElection(t *testing.T) {
	dir := t.TempDir()
	a, b := dir+"/b1.log", dir+"/b2.log"
	os.WriteFile(a, []byte("time=2026-12-04T10:00:01.000Z level=INFO msg=\"elected leaders\" broker=1\n"+
		"time=2026-12-04T10:00:09.000Z level=INFO msg=\"elected leaders\" broker=1\n"), 0o644)
	os.WriteFile(b, []byte("time=2026-12-04T10:00:05.500Z level=INFO msg=\"became controller\" broker=2\n"+
		"time=2026-12-04T10:00:06.250Z level=INFO msg=\"elected leaders\" broker=2\n"), 0o644)
	fault := time.Date(2026, 12, 4, 10, 0, 2, 0, time.UTC)
	at, ok := firstElection([]string{a, b}, fault)
	if !ok || at.Sub(fault) != 4250*time.Millisecond {
		t.Fatalf("first election %v %v, want 4.25 s after the fault", at, ok)
	}
	if _, ok := firstElection([]string{a, b}, fault.Add(time.Minute)); ok {
		t.Fatal("an election found after the last one")
	}
}

// TestStoreHistoryReadsItAll: the history of a real store, longer than
// one watch response, is read to its end, deletions included. (It once
// stopped at the first response, whose revision stamp is the store's
// current one: a 200-fault run read 14 of 71 controller epochs and
// reported topics deleted after the cut as left in the store.)
func TestStoreHistoryReadsItAll(t *testing.T) {
	srv, err := embedetcd.StartLocal(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s, err := etcdstore.Connect(srv.Endpoints(), "/samsa", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	val := bytes.Repeat([]byte("x"), 100)
	const n = 1500 // 3000 revisions: etcd replays history 1000 revisions a response
	for i := 0; i < n; i++ {
		key := metadata.TopicKey("chaos-churn-" + strconv.Itoa(i))
		if _, err := s.Txn(ctx, nil, []metastore.Op{metastore.Put(key, val)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Txn(ctx, nil, []metastore.Op{metastore.Delete(key)}); err != nil {
			t.Fatal(err)
		}
	}
	events, err := StoreHistory(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2*n {
		t.Fatalf("%d events, want %d", len(events), 2*n)
	}
	if left := StoreLeftovers(events); len(left) > 0 {
		t.Fatalf("leftovers in a store that holds none: %q", left[:min(3, len(left))])
	}
}

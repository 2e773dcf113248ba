package group

import (
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
)

// offsetKey reads what Decode reads from an offset key, and refuses what
// is not one (the load then falls back to Decode).
func TestOffsetKeyAsDecode(t *testing.T) {
	kv := OffsetRecord("grp", TP{"topic", 7}, &Offset{Offset: 42, LeaderEpoch: 3, Metadata: "m", CommitTime: time.UnixMilli(1000)})
	g, tp, p, ok := offsetKey(kv.Key)
	d, err := Decode(kv.Key, kv.Value)
	if !ok || err != nil || string(g) != d.Group || string(tp) != d.TP.Topic || p != d.TP.Partition {
		t.Fatalf("offsetKey %q %q %d %v; Decode %+v %v", g, tp, p, ok, d, err)
	}
	o, err := decodeOffsetValue(kv.Value)
	if err != nil || o != *d.Offset {
		t.Fatalf("decodeOffsetValue %+v %v, Decode %+v", o, err, *d.Offset)
	}
	meta := GroupRecord(NewGroup("grp", &Config{}, nil, time.UnixMilli(0)), nil, time.UnixMilli(0), false)
	for _, k := range [][]byte{nil, {0}, meta.Key, kv.Key[:len(kv.Key)-1], {0, 1, 0xff, 0xff}, {0, 1, 0, 9, 'a'}, {1, 1, 0, 0, 0, 0, 0, 0, 0, 0}} {
		if _, _, _, ok := offsetKey(k); ok {
			t.Errorf("offsetKey(%v) read an offset key", k)
		}
	}
}

// The load applies a partition's offset records in order: a long run of
// one group's records with repeats, groups interleaved, tombstones,
// metadata records between them.
func TestLoadRuns(t *testing.T) {
	now := t0
	l := newMemLog()
	off := func(g string, p int32, o int64) record.KV {
		return OffsetRecord(g, TP{"t", p}, &Offset{Offset: o, LeaderEpoch: -1, CommitTime: now})
	}
	var recs []record.KV
	for i := range 600 { // one long run of a: partitions 0..99, each written again and again
		recs = append(recs, off("a", int32(i%100), int64(i)))
	}
	recs = append(recs, OffsetRecord("a", TP{"t", 5}, nil), off("b", 1, 11), OffsetRecord("b", TP{"t", 1}, nil), off("b", 2, 12),
		GroupRecord(NewGroup("b", &Config{}, nil, now), nil, now, false), off("b", 3, 13), off("a", 5, 55), OffsetRecord("a", TP{"t", 7}, nil),
		off("c", 0, 1), OffsetRecord("c", TP{"t", 0}, nil))
	if _, _, err := l.Append(0, record.Build(now.UnixMilli(), recs)); err != nil {
		t.Fatal(err)
	}
	c := newTestCoordinator(l, &now)
	c.BecomeLeader(0, 1)
	waitLoaded(t, c)
	want := map[string]map[int32]int64{"a": {}, "b": {2: 12, 3: 13}, "c": {}}
	for i := range 600 {
		want["a"][int32(i%100)] = int64(i)
	}
	want["a"][5] = 55
	delete(want["a"], 7)
	for g, w := range want {
		got, err := c.FetchOffsets(g, nil)
		if err != nil || len(got) != len(w) {
			t.Fatalf("group %s: %d offsets (%v), want %d", g, len(got), err, len(w))
		}
		for _, o := range got {
			if o.Offset.Offset != w[o.TP.Partition] {
				t.Errorf("group %s partition %d at %d, want %d", g, o.TP.Partition, o.Offset.Offset, w[o.TP.Partition])
			}
		}
	}
}

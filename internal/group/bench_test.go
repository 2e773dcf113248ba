package group

import (
	"fmt"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
)

// BenchmarkLoadPartition: what a new coordinator does after a failover,
// replaying one partition holding 10k groups (each Stable with a member)
// and 1M committed offsets (100 per group), from memory (the broker reads
// the same records from its log). Reports the load time.
func BenchmarkLoadPartition(b *testing.B) {
	const groups, perGroup = 10_000, 100
	l := newMemLog()
	now := t0
	c := newTestCoordinator(l, &now)
	c.BecomeLeader(0, 1)
	waitLoadedB(b, c)
	for gi := range groups {
		id := fmt.Sprintf("group-%05d", gi)
		g := NewGroup(id, &c.cfg.Group, nil, now)
		g.add(&Member{ID: id + "-m", ClientID: "c", SessionTimeout: 10 * time.Second, RebalanceTimeout: 10 * time.Second,
			ProtocolType: "consumer", Protocols: []Protocol{{Name: "range", Metadata: []byte("meta")}}})
		g.ProtocolType, g.protocol, g.generation, g.state = "consumer", "range", 1, Stable
		recs := []record.KV{GroupRecord(g, map[string][]byte{id + "-m": []byte("assignment")}, now, false)}
		for p := range perGroup {
			recs = append(recs, OffsetRecord(id, TP{"topic", int32(p)}, &Offset{Offset: int64(p), LeaderEpoch: 1, CommitTime: now}))
		}
		if _, _, err := l.Append(0, record.Build(now.UnixMilli(), recs)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		c2 := newTestCoordinator(l, &now)
		start := time.Now()
		c2.BecomeLeader(0, int32(i+2))
		waitLoadedB(b, c2)
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms/load")
		if got, _ := c2.FetchOffsets("group-09999", nil); len(got) != perGroup {
			b.Fatalf("loaded %d offsets of the last group", len(got))
		}
	}
}

func waitLoadedB(b *testing.B, c *Coordinator) {
	for {
		if _, err := c.FetchOffsets("x", nil); err == nil {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// BenchmarkRebalance100: a group of 100 members, from the first JoinGroup
// to every member synced, through the core (the network left out).
func BenchmarkRebalance100(b *testing.B) {
	cfg := &Config{MinSessionTimeout: time.Second, MaxSessionTimeout: time.Hour, MaxSize: 1000}
	for range b.N {
		now := t0
		g := NewGroup("g", cfg, nil, now)
		synced := 0
		ids := make([]string, 0, 100)
		var leader JoinResult
		for i := range 100 {
			g.Join(JoinRequest{ClientID: fmt.Sprint("c", i), SessionTimeout: 10 * time.Second, RebalanceTimeout: 10 * time.Second,
				ProtocolType: "consumer", Protocols: []Protocol{{Name: "range", Metadata: []byte("m")}}}, now, func(r JoinResult) {
				ids = append(ids, r.MemberID)
				if r.Leader == r.MemberID {
					leader = r
				}
			})
		}
		for len(ids) < 100 || g.State() != CompletingRebalance { // the join phase ends
			now = now.Add(time.Second)
			g.Tick(now)
		}
		assign := map[string][]byte{}
		for _, m := range leader.Members {
			assign[m.MemberID] = []byte("a")
		}
		for _, id := range ids {
			g.Sync(SyncRequest{MemberID: id, Generation: g.Generation(), Assignments: assign}, now, func(SyncResult) { synced++ })
		}
		if synced != 100 || g.State() != Stable {
			b.Fatalf("synced %d, state %v", synced, g.State())
		}
	}
}

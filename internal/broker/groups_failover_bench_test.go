package broker

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/group"
)

// BenchmarkCoordinatorFailover: issue 18's figure. 3 brokers in this
// process (real logs, one embedded etcd), __consumer_offsets at RF 3 (50
// partitions); SAMSA_COORD_GROUPS groups (default 10000), all of whose ids
// hash to one __consumer_offsets partition (Kafka's partitionFor), hold
// SAMSA_COORD_OFFSETS committed offsets in all (default 1000000: 100
// partitions of topic ft each), committed straight to the coordinator. The
// partition is one led by a broker other than the controller, so that only
// the coordinator dies. After csSettle and a collection, that broker
// crashes (crash: as under SIGKILL, its session ended at once), and the
// benchmark times from its session end until an OffsetFetch of one of the
// groups, sent again and again to each remaining broker on a connection of
// its own, is answered with that group's offsets (all of them, checked).
// Also reported: until both remaining brokers' metadata shows a new leader
// for the partition (the election), and until the new leader first answers
// COORDINATOR_LOAD_IN_PROGRESS (its load has started).
//
//	go test ./internal/broker -run '^$' -bench CoordinatorFailover -benchtime 1x -count 3
func BenchmarkCoordinatorFailover(b *testing.B) {
	nGroups := envInt(b, "SAMSA_COORD_GROUPS", 10_000)
	perGroup := max(1, envInt(b, "SAMSA_COORD_OFFSETS", 1_000_000)/nGroups)
	for range b.N {
		b.StopTimer()
		brokers := startCluster(b, 3, nil)
		ctrl := controllerOf(b, brokers)
		cl := newClient(b, ctrl)
		createTopic(b, cl, "ft", int32(perGroup), nil)
		coordinatorReady(b, cl, "probe") // creates __consumer_offsets
		offsetsSee(b, brokers, "every partition led, with its whole ISR", func(p api.PartitionInfo) bool { return p.Leader >= 0 && len(p.ISR) == 3 })

		// The partition: the first led by a broker other than the controller.
		t, _ := ctrl.cache.Topic(api.OffsetsTopic)
		part, victimID := int32(-1), int32(-1)
		for _, p := range t.Partitions {
			if p.Leader != ctrl.NodeID() {
				part, victimID = p.ID, p.Leader
				break
			}
		}
		var victim *Broker
		var others []*Broker
		for _, br := range brokers {
			if br.NodeID() == victimID {
				victim = br
			} else {
				others = append(others, br)
			}
		}
		ids := groupsOfPartition(nGroups, part, int32(len(t.Partitions)))

		setup := time.Now()
		commitGroups(b, cl, ids, perGroup)
		b.Logf("%d groups × %d offsets committed to __consumer_offsets-%d (leader broker %d) in %v",
			nGroups, perGroup, part, victimID, time.Since(setup).Round(time.Millisecond))
		// Every replica caught up before the crash (acks=all commits leave
		// the ISR whole).
		offsetsSee(b, brokers, "the partition's ISR whole after the commits", func(p api.PartitionInfo) bool { return p.ID != part || len(p.ISR) == 3 })
		want := ids[len(ids)-1]
		wantBase := int64(len(ids)-1) * 1000

		time.Sleep(csSettle)
		runtime.GC()
		stopProfile := windowProfile(b)
		b.StartTimer()
		ended := crash(b, victim)

		elected := make(chan time.Duration, 1)
		go func() {
			took, _ := waitOffsetsSee(others, ended, 10*time.Minute, func(p api.PartitionInfo) bool {
				return p.ID != part || (p.Leader >= 0 && p.Leader != victimID)
			})
			elected <- took
		}()
		var loading time.Duration
		var answered time.Duration
		var asks, notCoord, inLoad int
		deadline := ended.Add(10 * time.Minute)
	loop:
		for {
			for _, br := range others {
				asks++
				code, got := offsetFetch(b, br, want)
				switch code {
				case kerr.NotCoordinator.Code:
					notCoord++
					continue
				case kerr.CoordinatorLoadInProgress.Code:
					inLoad++
					if loading == 0 {
						loading = time.Since(ended)
					}
					continue
				case 0:
				default:
					b.Fatalf("OffsetFetch of %s from broker %d: %v", want, br.NodeID(), kerr.ErrorForCode(code))
				}
				answered = time.Since(ended)
				if len(got) != perGroup {
					b.Fatalf("OffsetFetch of %s from broker %d: %d offsets, want %d", want, br.NodeID(), len(got), perGroup)
				}
				for p, o := range got {
					if o != wantBase+int64(p) {
						b.Fatalf("OffsetFetch of %s from broker %d: partition %d at %d, want %d", want, br.NodeID(), p, o, wantBase+int64(p))
					}
				}
				break loop
			}
			if time.Now().After(deadline) {
				b.Fatalf("no OffsetFetch of %s answered in 10 minutes (%d asks)", want, asks)
			}
			time.Sleep(time.Millisecond)
		}
		b.StopTimer()
		stopProfile()
		election := <-elected
		b.ReportMetric(answered.Seconds(), "s/first-offset-fetch")
		b.ReportMetric(election.Seconds(), "s/new-leader")
		b.ReportMetric(loading.Seconds(), "s/load-started")
		b.ReportMetric(float64(nGroups), "groups")
		b.ReportMetric(float64(nGroups*perGroup), "offsets")
		b.Logf("broker %d (coordinator of __consumer_offsets-%d: %d groups, %d offsets) crashed: new leader in both other brokers' metadata after %v, first COORDINATOR_LOAD_IN_PROGRESS after %v, %s's offsets answered after %v (%d asks: %d NOT_COORDINATOR, %d LOAD_IN_PROGRESS); load average %s",
			victimID, part, nGroups, nGroups*perGroup, election.Round(time.Millisecond), loading.Round(time.Millisecond), want,
			answered.Round(time.Millisecond), asks, notCoord, inLoad, loadAvg())
	}
}

// groupsOfPartition returns n group ids whose __consumer_offsets partition
// (of parts) is part.
func groupsOfPartition(n int, part, parts int32) []string {
	ids := make([]string, 0, n)
	for i := 0; len(ids) < n; i++ {
		id := fmt.Sprintf("failover-%07d", i)
		if group.PartitionFor(id, parts) == part {
			ids = append(ids, id)
		}
	}
	return ids
}

// commitGroups commits partitions 0..perGroup-1 of topic ft for each group,
// group i's partition p at offset i*1000+p, one OffsetCommit per group, 8
// at a time.
func commitGroups(b *testing.B, cl *kgo.Client, ids []string, perGroup int) {
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(ids); i += 8 {
				req := kmsg.NewPtrOffsetCommitRequest()
				req.Group, req.Generation = ids[i], -1
				rt := kmsg.NewOffsetCommitRequestTopic()
				rt.Topic = "ft"
				for p := range perGroup {
					rp := kmsg.NewOffsetCommitRequestTopicPartition()
					rp.Partition, rp.Offset = int32(p), int64(i)*1000+int64(p)
					rt.Partitions = append(rt.Partitions, rp)
				}
				req.Topics = append(req.Topics, rt)
				resp, err := req.RequestWith(context.Background(), cl)
				if err != nil {
					b.Errorf("commit of %s: %v", ids[i], err)
					return
				}
				for _, p := range resp.Topics[0].Partitions {
					if p.ErrorCode != 0 {
						b.Errorf("commit of %s: partition %d: %v", ids[i], p.Partition, kerr.ErrorForCode(p.ErrorCode))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

// offsetFetch asks br, on a connection of its own, for every committed
// offset of the group: the error code (the group's) and topic ft's offsets
// by partition.
func offsetFetch(b *testing.B, br *Broker, groupID string) (int16, map[int32]int64) {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group = 7, groupID // Topics nil: all of them
	resp := rawRequest(b, br.Addr().String(), req).(*kmsg.OffsetFetchResponse)
	if resp.ErrorCode != 0 {
		return resp.ErrorCode, nil
	}
	got := map[int32]int64{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return p.ErrorCode, nil
			}
			if t.Topic == "ft" {
				got[p.Partition] = p.Offset
			}
		}
	}
	return 0, got
}

// offsetsSee waits until every broker's metadata cache satisfies ok for
// every partition of __consumer_offsets.
func offsetsSee(b *testing.B, brokers []*Broker, what string, ok func(api.PartitionInfo) bool) {
	if _, err := waitOffsetsSee(brokers, time.Now(), 2*time.Minute, ok); err != nil {
		b.Fatalf("%s: %v", what, err)
	}
}

// waitOffsetsSee is offsetsSee for any goroutine; it returns how long it
// took from start.
func waitOffsetsSee(brokers []*Broker, start time.Time, limit time.Duration, ok func(api.PartitionInfo) bool) (time.Duration, error) {
	deadline := time.Now().Add(limit)
	for _, br := range brokers {
		for {
			changed := br.cache.Changed()
			t, found := br.cache.Topic(api.OffsetsTopic)
			done := found && len(t.Partitions) > 0
			for _, p := range t.Partitions {
				done = done && ok(p)
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("broker %d: not after %v", br.NodeID(), limit)
			}
			select {
			case <-changed:
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return time.Since(start), nil
}

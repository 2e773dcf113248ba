package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// TestStoppedControllerIsFenced SIGSTOPs the controller past its session, lets
// another take over and create a topic, then SIGCONTs it: the stale
// controller's store writes never land (every change after the takeover
// carries the new epoch) and it rejoins as a normal broker.
func TestStoppedControllerIsFenced(t *testing.T) { testStoppedControllerIsFenced(t, "samsa-store") }

// TestStoppedControllerIsFencedZooKeeper: the same on Debian's ZooKeeper,
// where the server expires the stopped process's sessions while it sleeps
// and it learns so when it reconnects.
func TestStoppedControllerIsFencedZooKeeper(t *testing.T) {
	testStoppedControllerIsFenced(t, "zookeeper")
}

// testStoppedControllerIsFenced checks three ways that the stalled
// controller wrote nothing after the stall: the store's changes as a watch
// delivers them (every one on etcd; ZooKeeper keeps no history and its
// watches may skip a key's intermediate values), the last write of every
// key as the store holds it at the end (staleKeys), and the brokers' logs
// (none applied a LeaderAndIsr of the stalled controller).
func testStoppedControllerIsFenced(t *testing.T, storeKind string) {
	st := startStore(t, storeKind)
	c := startClusterOn(t, st, "num.partitions=3", "default.replication.factor=2")
	old := c.waitView(c.procs[0].addr, "3 brokers and a controller", func(n int, ctrl int32) bool { return n == 3 && ctrl >= 0 })
	c.createTopic(c.addrs(-1), "before", 3)
	// Every broker has applied the old controller's LeaderAndIsr for
	// "before" once an acks=all record reached all three replicas of each
	// partition; only then does the log below count as "after the stall".
	ackAllPartitions(t, c.addrs(-1), "before", 3)
	time.Sleep(200 * time.Millisecond)

	store := st.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kvs, stopRev, err := store.List(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	history := store.WatchPrefix(ctx, "/", stopRev+1)
	oldEpoch := epochIn(t, kvs)
	// Everything the stalled controller wrote so far is what staleKeys
	// looks for after the stall: it must find it here.
	checkFindsOwnWrites(t, staleKeys(t, kvs, 0, old, oldEpoch), "before")

	logStart := map[int32]int{}
	for id, p := range c.procs {
		logStart[id] = len(p.stderr.String())
	}
	c.procs[old].cmd.Process.Signal(syscall.SIGSTOP)
	// Work the stale controller would act on when it wakes: a topic
	// written while its session still lives, so that the change waits in
	// its store connection (the new controller elects the leaders).
	survivor := c.procs[(old+1)%3].addr
	autoCreateAt(t, survivor, "while-stopped")
	next := c.waitView(survivor, "a new controller", func(n int, nc int32) bool { return nc >= 0 && nc != old })
	c.waitPartitions(c.addrs(old), "while-stopped", "leaders", func(v map[int32]partitionView) bool {
		for _, p := range v {
			if p.leader < 0 || p.leader == old {
				return false
			}
		}
		return len(v) == 3
	})
	c.procs[old].cmd.Process.Signal(syscall.SIGCONT)
	c.waitView(c.procs[old].addr, "the stopped broker rejoining", func(n int, nc int32) bool { return n == 3 && nc == next })
	// One more change so that the history below reaches past the rejoin.
	c.createTopic(c.addrs(-1), "after", 3)

	checkHistory(t, history, old)
	kvs, _, err = store.List(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	if stale := staleKeys(t, kvs, stopRev, old, oldEpoch); len(stale) > 0 {
		t.Fatalf("keys last written after the stall (revision %d) by the stalled controller %d (epoch %d): %v", stopRev, old, oldEpoch, stale)
	}
	if e := epochIn(t, kvs); e <= oldEpoch {
		t.Fatalf("controller epoch %d after the takeover, %d before", e, oldEpoch)
	}
	checkNoStaleLeaderAndIsr(t, c, logStart, old, oldEpoch)
}

// autoCreateAt has the broker at addr create topic as Metadata's automatic
// creation does (any broker writes the topic; CreateTopics needs the
// controller), without waiting for its leaders.
func autoCreateAt(t *testing.T, addr, topic string) {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Version, req.AllowAutoTopicCreation = 9, true
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := raw(addr, req)
	if err != nil {
		t.Fatalf("auto-create %s at %s: %v", topic, addr, err)
	}
	if code := resp.(*kmsg.MetadataResponse).Topics[0].ErrorCode; code != kerr.LeaderNotAvailable.Code {
		t.Fatalf("auto-create %s at %s: %v, want LEADER_NOT_AVAILABLE (created)", topic, addr, kerr.ErrorForCode(code))
	}
}

// epochIn is the controller epoch among kvs.
func epochIn(t *testing.T, kvs []metastore.KV) int32 {
	t.Helper()
	for _, kv := range kvs {
		if kv.Key == metadata.ControllerEpochKey {
			var e int32
			if _, err := fmt.Sscan(string(kv.Value), &e); err != nil {
				t.Fatalf("controller epoch %q: %v", kv.Value, err)
			}
			return e
		}
	}
	t.Fatal("no controller epoch in the store")
	return 0
}

// checkHistory reads the store's changes after the stall up to the first
// state chunk of topic "after": they must carry only one controller epoch,
// and /controller must not name the stalled controller again.
func checkHistory(t *testing.T, history <-chan metastore.WatchResponse, old int32) {
	t.Helper()
	epochs := map[string]bool{}
	deadline := time.After(20 * time.Second)
	for sawAfter := false; !sawAfter; {
		select {
		case resp := <-history:
			if resp.Err != nil {
				t.Fatal(resp.Err)
			}
			for _, ev := range resp.Events {
				checkEvent(t, ev, old, epochs)
				if topic, p, ok := metadata.ParseTopicsKey(ev.KV.Key); ok && topic == "after" && p >= 0 {
					sawAfter = true
				}
			}
		case <-deadline:
			t.Fatal("store history did not reach the last topic")
		}
	}
	if len(epochs) != 1 {
		t.Fatalf("partition states written under controller epochs %v, want only the new one", epochs)
	}
}

// staleKeys returns, by key, why each key of kvs last written after
// revision since bears the hand of controller old at epoch oldEpoch (or
// older): a state chunk whose newest state has such an epoch (a chunk write
// stamps the states it changes with the writer's epoch and keeps the
// others'), /controller naming old, /controller_epoch at oldEpoch or less.
// Store versions only grow, so a write that landed after the stall has a
// version above the stall's revision even on ZooKeeper, where a later
// write of the same key hides it (the watch and the brokers' logs cover
// that case).
func staleKeys(t *testing.T, kvs []metastore.KV, since int64, old, oldEpoch int32) map[string]string {
	t.Helper()
	stale := map[string]string{}
	for _, kv := range kvs {
		if kv.Version <= since {
			continue
		}
		switch _, chunk, isTopic := metadata.ParseTopicsKey(kv.Key); {
		case kv.Key == metadata.ControllerKey:
			if id, err := metadata.DecodeController(kv.Value); err != nil || id == old {
				stale[kv.Key] = fmt.Sprintf("names broker %d (%v) at version %d", id, err, kv.Version)
			}
		case kv.Key == metadata.ControllerEpochKey:
			if e := epochIn(t, []metastore.KV{kv}); e <= oldEpoch {
				stale[kv.Key] = fmt.Sprintf("epoch %d at version %d", e, kv.Version)
			}
		case isTopic && chunk >= 0:
			es, err := metadata.DecodeStateChunk(kv.Value)
			if err != nil {
				t.Fatalf("%s: %v", kv.Key, err)
			}
			writer := int32(-1)
			for _, e := range es {
				writer = max(writer, e.State.ControllerEpoch)
			}
			if writer <= oldEpoch {
				stale[kv.Key] = fmt.Sprintf("newest state of epoch %d at version %d", writer, kv.Version)
			}
		}
	}
	return stale
}

// checkFindsOwnWrites fails unless staleKeys, run over the keys the
// stalled controller wrote before the stall, found each kind of its writes:
// /controller, /controller_epoch and the state chunks of topic.
func checkFindsOwnWrites(t *testing.T, found map[string]string, topic string) {
	t.Helper()
	chunks := 0
	for key := range found {
		if tp, chunk, ok := metadata.ParseTopicsKey(key); ok && tp == topic && chunk >= 0 {
			chunks++
		}
	}
	if found[metadata.ControllerKey] == "" || found[metadata.ControllerEpochKey] == "" || chunks == 0 {
		t.Fatalf("the check of the keys does not recognise the controller's own writes before the stall (found %v): it cannot work", found)
	}
}

// checkNoStaleLeaderAndIsr fails if a broker applied a LeaderAndIsr of the
// stalled controller after the stall (before the stall they did: the
// pattern is checked to match then).
func checkNoStaleLeaderAndIsr(t *testing.T, c *cluster, logStart map[int32]int, old, oldEpoch int32) {
	t.Helper()
	stale := regexp.MustCompile(fmt.Sprintf(`msg="applied LeaderAndIsr".* controller=%d controller_epoch=%d `, old, oldEpoch))
	before := 0
	for id, p := range c.procs {
		log := p.stderr.String()
		if stale.MatchString(log[:logStart[id]]) {
			before++
		}
		if m := stale.FindString(log[logStart[id]:]); m != "" {
			t.Fatalf("broker %d (the stalled one: %d) applied a LeaderAndIsr of the stalled controller after the stall: %s", id, old, m)
		}
	}
	if before == 0 {
		t.Fatal("no broker log shows the old controller's LeaderAndIsr even before the stall: the check cannot work")
	}
}

// checkEvent fails on any store change the stale controller could have made.
func checkEvent(t *testing.T, ev metastore.Event, old int32, epochs map[string]bool) {
	t.Helper()
	switch {
	case ev.KV.Key == metadata.ControllerKey && ev.Type == metastore.EventPut:
		if id, _ := metadata.DecodeController(ev.KV.Value); id == old {
			t.Fatalf("the stale controller %d wrote /controller again", old)
		}
	case ev.Type == metastore.EventPut && strings.Contains(ev.KV.Key, "/states/"):
		// A chunk write changes some of its states, each stamped with the
		// writer's controller epoch; the others keep theirs. The highest
		// epoch in the chunk is the writer's.
		es, err := metadata.DecodeStateChunk(ev.KV.Value)
		if err != nil {
			t.Fatal(err)
		}
		writer := int32(-1)
		for _, e := range es {
			writer = max(writer, e.State.ControllerEpoch)
		}
		epochs[fmt.Sprint(writer)] = true
	}
}

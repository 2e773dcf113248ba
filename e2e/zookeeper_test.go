package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore/zkstore/zktest"
)

// TestZooKeeperCluster runs three `samsa server` on Debian's ZooKeeper
// (standalone) with Kafka's zookeeper.connect: the brokers register as
// ephemeral znodes, a topic is created, records produced and consumed with
// franz-go; the controller is SIGKILLed and another broker takes over when
// its ZooKeeper session expires; the records stay readable and the killed
// broker rejoins.
func TestZooKeeperCluster(t *testing.T) {
	st := startStore(t, "zookeeper")
	c := startClusterOn(t, st)
	all := c.addrs(-1)
	ctrl := c.waitView(all[0], "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })

	// Kafka's znodes, under the chroot.
	store := st.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for id := range int32(3) {
		kv, ok, err := store.Get(ctx, metadata.BrokerKey(id))
		if err != nil || !ok || kv.Session == 0 {
			t.Fatalf("broker %d's registration: %+v found=%v %v (want an ephemeral znode)", id, kv, ok, err)
		}
	}

	const topic = "zk"
	c.createTopic(all, topic, 3)
	c.waitPartitions(all, topic, "full ISR", fullISR(3))
	produced := produceBatch(t, all, topic, 0, 300)

	c.procs[ctrl].kill()
	others := c.addrs(ctrl)
	next := c.waitView(others[0], "a new controller", func(n int, nc int32) bool { return nc >= 0 && nc != ctrl })
	t.Logf("controller %d SIGKILLed; broker %d took over", ctrl, next)
	c.waitPartitions(others, topic, "leaders on the survivors", func(v map[int32]partitionView) bool {
		for p := range int32(3) {
			if l := v[p].leader; l < 0 || l == ctrl {
				return false
			}
		}
		return true
	})
	produced += produceBatch(t, others, topic, 300, 300)
	got := consumeAll(t, others, topic)
	n := 0
	for _, recs := range got {
		n += len(recs)
	}
	if n != produced {
		t.Fatalf("consumed %d records, produced %d", n, produced)
	}
	c.createTopic(others, "after", 2)

	c.start(ctrl)
	c.waitView(c.procs[ctrl].addr, "the killed broker rejoining", func(n int, nc int32) bool { return n == 3 && nc == next })
}

// startZooKeeper runs Debian's ZooKeeper, n servers forming one ensemble
// (n = 1: standalone).
func startZooKeeper(t *testing.T, n int) *storeProc {
	srvs := zktest.StartEnsemble(t, n)
	return &storeProc{kind: "zookeeper", endpoint: zktest.Connect(srvs, ""), zk: srvs}
}

// produceBatch produces n acks=all records numbered from first (on a
// client with opts besides) and returns n.
func produceBatch(t *testing.T, addrs []string, topic string, first, n int, opts ...kgo.Opt) int {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(time.Minute)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Key: []byte(fmt.Sprint(i % 7)), Value: []byte(fmt.Sprintf("%s-%06d", topic, first+i))}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	return n
}

package broker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// initProducerID sends InitProducerId (no transactional id) over the wire.
func initProducerID(t *testing.T, b *Broker, version int16, id int64, epoch int16) *kmsg.InitProducerIDResponse {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.ProducerID, req.ProducerEpoch = version, id, epoch
	return rawRequest(t, b.Addr().String(), req).(*kmsg.InitProducerIDResponse)
}

func newProducerID(t *testing.T, b *Broker, version int16) int64 {
	t.Helper()
	r := initProducerID(t, b, version, -1, -1)
	if r.ErrorCode != 0 || r.ProducerID < 0 || r.ProducerEpoch != 0 {
		t.Fatalf("broker %d, v%d: id %d epoch %d: %v", b.NodeID(), version, r.ProducerID, r.ProducerEpoch, kerr.ErrorForCode(r.ErrorCode))
	}
	return r.ProducerID
}

// Two brokers hand out distinct ids from their own blocks, at every
// version; a broker bumps the epoch of an id another broker issued
// (KIP-360) and refuses one nobody issued; a restarted broker hands out
// none it handed out before.
func TestInitProducerIDCluster(t *testing.T) {
	brokers := startCluster(t, 2, nil)

	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	advertised := false
	for _, k := range rawRequest(t, brokers[0].Addr().String(), av).(*kmsg.ApiVersionsResponse).ApiKeys {
		advertised = advertised || (k.ApiKey == 22 && k.MinVersion == 0 && k.MaxVersion == 5)
	}
	if !advertised {
		t.Fatal("ApiVersions does not advertise InitProducerId 0-5")
	}

	owner := map[int64]int32{}
	highest := int64(-1)
	for version := range int16(6) {
		for _, b := range brokers {
			id := newProducerID(t, b, version)
			if other, dup := owner[id]; dup {
				t.Fatalf("id %d handed out by broker %d and broker %d", id, other, b.NodeID())
			}
			owner[id], highest = b.NodeID(), max(highest, id)
		}
	}

	var fromZero int64 = -1
	for id, b := range owner {
		if b == 0 {
			fromZero = id
			break
		}
	}
	bumped := initProducerID(t, brokers[1], 5, fromZero, 4)
	if bumped.ErrorCode != 0 || bumped.ProducerID != fromZero || bumped.ProducerEpoch != 5 {
		t.Fatalf("KIP-360 bump of broker 0's id %d epoch 4 on broker 1: id %d epoch %d %v",
			fromZero, bumped.ProducerID, bumped.ProducerEpoch, kerr.ErrorForCode(bumped.ErrorCode))
	}
	rotated := initProducerID(t, brokers[0], 5, fromZero, 32766)
	if _, dup := owner[rotated.ProducerID]; dup || rotated.ErrorCode != 0 || rotated.ProducerEpoch != 0 || rotated.ProducerID < 0 {
		t.Fatalf("exhausted epoch: id %d epoch %d %v, want a new id", rotated.ProducerID, rotated.ProducerEpoch, kerr.ErrorForCode(rotated.ErrorCode))
	}
	highest = max(highest, rotated.ProducerID)
	unknown := initProducerID(t, brokers[1], 5, 1<<40, 0)
	if _, dup := owner[unknown.ProducerID]; dup || unknown.ErrorCode != 0 || unknown.ProducerEpoch != 0 || unknown.ProducerID < 0 || unknown.ProducerID == 1<<40 {
		t.Fatalf("never-issued id: %+v, want a new id (how a client answered UNKNOWN_PRODUCER_ID recovers)", unknown)
	}
	highest = max(highest, unknown.ProducerID)

	victim := brokers[1]
	cfg, store := victim.cfg, victim.store
	victim.Close()
	restarted, err := Start(cfg, Options{Logger: testLogger(t), Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { restarted.Close() })
	if id := newProducerID(t, restarted, 5); id <= highest {
		t.Fatalf("restarted broker handed out %d, not above %d (the highest id handed out before)", id, highest)
	}
	latest, _, err := metadata.New(store).LatestProducerIDBlock(context.Background())
	if err != nil || latest.Broker != restarted.NodeID() {
		t.Fatalf("latest block %+v (%v), want the restarted broker's", latest, err)
	}
}

// A broker with its own embedded store: the claimed blocks survive the
// store's restart with the broker.
func TestInitProducerIDRestartOwnStore(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, nil)
	first := newProducerID(t, b, 4)
	b.Close()
	b = startBroker(t, dir, nil)
	if second := newProducerID(t, b, 4); second <= first {
		t.Fatalf("after a restart: id %d, first life's %d", second, first)
	}
}

// franz-go with its defaults is an idempotent producer: it asks for a
// producer id before its first produce, and its batches carry it.
func TestIdempotentFranzGoClient(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, newClient(t, b), "idem", 1, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, epoch, err := cl.ProducerID(ctx)
	if err != nil || id < 0 || epoch != 0 {
		t.Fatalf("client producer id %d epoch %d: %v", id, epoch, err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "idem", Value: []byte("once")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	consumer := newClient(t, b, kgo.ConsumeTopics("idem"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := consumer.PollFetches(ctx)
	if err := fs.Err(); err != nil {
		t.Fatal(err)
	}
	var got []*kgo.Record
	fs.EachRecord(func(r *kgo.Record) { got = append(got, r) })
	if len(got) != 1 || string(got[0].Value) != "once" || got[0].ProducerID != id || got[0].ProducerEpoch != epoch {
		t.Fatalf("consumed %+v, want one record of producer %d epoch %d", got, id, epoch)
	}
}

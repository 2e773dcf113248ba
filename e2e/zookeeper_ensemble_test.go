package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/zkstore/zktest"
)

// ensembleSessionMs is TestZooKeeperEnsembleLoss's session timeout, long
// enough that the test's outages stay within it (Kafka's default is 18 s);
// TestZooKeeperQuorumLossPastSession covers an outage longer than the
// session.
const ensembleSessionMs = 20000

// quorumlessFor is how long TestZooKeeperEnsembleLoss keeps the ensemble
// without a quorum before checking the brokers a second time: well within
// ensembleSessionMs, twice sessionTimeoutMs.
const quorumlessFor = 2 * sessionTimeoutMs * time.Millisecond

// TestZooKeeperEnsembleLoss runs three brokers on a 3-member ensemble.
// Killing the member the controller's session is connected to interrupts
// nothing: records are produced and consumed, a topic is created, and the
// controller, its epoch and every registration stay. Killing a second
// member leaves no quorum: the brokers go on serving produce (acks=all
// with the ISR they have, and acks=1) and fetch with their last metadata,
// and no broker takes over as controller. Once both members are back the
// cluster goes on with the same controller, epoch and registrations (the
// controller wrote no new epoch: no split brain), a topic can be created,
// and every record produced before and during the outage is there.
func TestZooKeeperEnsembleLoss(t *testing.T) {
	zk := startZooKeeper(t, 3)
	c := startClusterOn(t, zk, fmt.Sprintf("zookeeper.session.timeout.ms=%d", ensembleSessionMs),
		fmt.Sprintf("metadata.store.session.timeout.ms=%d", ensembleSessionMs))
	all := c.addrs(-1)
	ctrl := c.waitView(all[0], "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	store := zk.client(t)
	const topic = "zk"
	c.createTopic(all, topic, 3)
	c.waitPartitions(all, topic, "full ISR", fullISR(3))
	produced := produceBatch(t, all, topic, 0, 200)
	live := readLiveness(t, store)

	first := memberOf(t, zk.zk, live.controllerSession)
	t.Logf("controller %d's session %#x is on %s (%s)", ctrl, int64(live.controllerSession), first.Addr, zkMode(first))
	first.Kill()
	c.createTopic(all, "one-member-down", 3)
	produced += produceBatch(t, all, topic, produced, 200)
	checkNumbered(t, consumeAll(t, all, topic), topic, produced)
	live.check(t, store, "after one member's loss")

	var second *zktest.Server
	for _, s := range zk.zk {
		if s != first {
			second = s
			break
		}
	}
	t.Logf("killing %s (%s): no quorum", second.Addr, zkMode(second))
	second.Kill()
	lost := time.Now()
	for _, s := range zk.zk {
		if s != first && s != second {
			waitNotServing(t, s)
		}
	}
	t.Logf("the last member stopped serving %v after the second loss", time.Since(lost).Round(time.Millisecond))
	// Served at once and still after a while (the brokers' connections
	// to the ensemble have been down for longer than the other e2e tests'
	// session timeout).
	for _, after := range []time.Duration{0, quorumlessFor} {
		time.Sleep(time.Until(lost.Add(after)))
		for _, a := range all {
			checkView(t, a, ctrl)
		}
		produced += produceBatch(t, all, topic, produced, 200)
		produced += produceBatch(t, all, topic, produced, 200, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
		checkNumbered(t, consumeAll(t, all, topic), topic, produced)
	}
	t.Logf("served produce and fetch for %v without a quorum", time.Since(lost).Round(time.Millisecond))

	restartZK(t, first)
	t.Logf("quorum back after %v (session timeout %dms)", time.Since(lost).Round(time.Millisecond), ensembleSessionMs)
	restartZK(t, second)
	live.check(t, store, "after the quorum's loss")
	c.createTopic(all, "recovered", 3)
	for _, a := range all {
		c.waitView(a, "3 brokers and the same controller", func(n int, ctl int32) bool { return n == 3 && ctl == ctrl })
	}
	produced += produceBatch(t, all, topic, produced, 200)
	checkNumbered(t, consumeAll(t, all, topic), topic, produced)
}

// TestZooKeeperQuorumLossPastSession leaves a 3-member ensemble without a
// quorum for longer than the brokers' session timeout. No server can
// expire a session then (the next leader renews them all), so, as Kafka's,
// the brokers keep their sessions and go on serving produce and fetch with
// their last metadata past the timeout; once the quorum is back nothing
// was re-elected or re-registered (the controller, its epoch and every
// broker epoch unchanged), a topic can be created, and every record
// produced before and during the outage is there.
func TestZooKeeperQuorumLossPastSession(t *testing.T) {
	zk := startZooKeeper(t, 3)
	c := startClusterOn(t, zk)
	all := c.addrs(-1)
	ctrl := c.waitView(all[0], "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	store := zk.client(t)
	const topic = "zk"
	c.createTopic(all, topic, 3)
	c.waitPartitions(all, topic, "full ISR", fullISR(3))
	produced := produceBatch(t, all, topic, 0, 200)
	before := readLiveness(t, store)

	zk.zk[0].Kill()
	zk.zk[1].Kill()
	waitNotServing(t, zk.zk[2])
	lost := time.Now()
	time.Sleep(2*sessionTimeoutMs*time.Millisecond + time.Second)
	for _, a := range all {
		c.waitView(a, "3 brokers and the same controller without a quorum", func(n int, ctl int32) bool { return n == 3 && ctl == ctrl })
	}
	produced += produceBatch(t, all, topic, produced, 200)
	produced += produceBatch(t, all, topic, produced, 200, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	checkNumbered(t, consumeAll(t, all, topic), topic, produced)
	t.Logf("served produce and fetch %v into the quorum's loss (session timeout %dms)", time.Since(lost).Round(time.Millisecond), sessionTimeoutMs)

	restartZK(t, zk.zk[0])
	restartZK(t, zk.zk[1])
	before.check(t, store, "after a quorum loss past the session timeout")
	c.createTopic(all, "recovered", 3)
	produced += produceBatch(t, all, topic, produced, 200)
	checkNumbered(t, consumeAll(t, all, topic), topic, produced)
}

// liveness is what a broker or controller failover would change in the
// store: the controller's znode (its creation and session), the controller
// epoch (its value and version) and each broker's registration (its
// creation: the broker epoch).
type liveness struct {
	controllerSession metastore.SessionID
	controller        metastore.KV
	epoch             metastore.KV
	brokers           map[string]int64
}

func readLiveness(t *testing.T, store metastore.Store) liveness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		l, err := tryLiveness(ctx, store)
		if err == nil {
			return l
		}
		if ctx.Err() != nil {
			t.Fatalf("reading the controller and registrations: %v", err)
		}
		time.Sleep(200 * time.Millisecond) // the client may be moving to another member
	}
}

func tryLiveness(ctx context.Context, store metastore.Store) (liveness, error) {
	ctl, ok, err := store.Get(ctx, metadata.ControllerKey)
	if err != nil || !ok {
		return liveness{}, fmt.Errorf("controller: found %v, %v", ok, err)
	}
	epoch, ok, err := store.Get(ctx, metadata.ControllerEpochKey)
	if err != nil || !ok {
		return liveness{}, fmt.Errorf("controller epoch: found %v, %v", ok, err)
	}
	kvs, _, err := store.List(ctx, metadata.BrokerIDsPrefix)
	if err != nil {
		return liveness{}, err
	}
	l := liveness{controllerSession: ctl.Session, controller: ctl, epoch: epoch, brokers: map[string]int64{}}
	for _, kv := range kvs {
		l.brokers[kv.Key] = kv.Created
	}
	return l, nil
}

// check fails unless the store shows the same controller, epoch and
// registrations as l.
func (l liveness) check(t *testing.T, store metastore.Store, when string) {
	t.Helper()
	now := readLiveness(t, store)
	if now.controller.Created != l.controller.Created || now.controllerSession != l.controllerSession {
		t.Errorf("%s: /controller %s (created %#x, session %#x), was %s (created %#x, session %#x)", when,
			now.controller.Value, now.controller.Created, int64(now.controllerSession),
			l.controller.Value, l.controller.Created, int64(l.controllerSession))
	}
	if string(now.epoch.Value) != string(l.epoch.Value) || now.epoch.Version != l.epoch.Version {
		t.Errorf("%s: controller epoch %s (version %#x), was %s (version %#x): a controller was elected",
			when, now.epoch.Value, now.epoch.Version, l.epoch.Value, l.epoch.Version)
	}
	if fmt.Sprint(now.brokers) != fmt.Sprint(l.brokers) {
		t.Errorf("%s: registrations (key: creation) %v, were %v", when, now.brokers, l.brokers)
	}
}

// memberOf is the ensemble member serving session id, found in the
// connections each member lists (the cons four-letter word).
func memberOf(t *testing.T, srvs []*zktest.Server, id metastore.SessionID) *zktest.Server {
	t.Helper()
	sid := fmt.Sprintf("sid=%#x,", int64(id))
	var outs []string
	for _, s := range srvs {
		out, err := zktest.FourLetter(s.Addr, "cons")
		if err == nil && strings.Contains(out, sid) {
			return s
		}
		outs = append(outs, fmt.Sprintf("%s: %v\n%s", s.Addr, err, out))
	}
	t.Fatalf("no member lists session %#x:\n%s", int64(id), strings.Join(outs, "\n"))
	return nil
}

// zkMode is a member's role (leader, follower, standalone), for the log.
func zkMode(s *zktest.Server) string {
	out, err := zktest.FourLetter(s.Addr, "srvr")
	if err != nil {
		return err.Error()
	}
	for _, line := range strings.Split(out, "\n") {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return m
		}
	}
	return "mode unknown"
}

// waitNotServing waits until member s, left without a quorum, stops
// serving (and has closed its clients' connections).
func waitNotServing(t *testing.T, s *zktest.Server) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out, err := zktest.FourLetter(s.Addr, "srvr")
		if err == nil && !strings.Contains(out, "Mode:") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still serves without a quorum: %s %v", s.Addr, out, err)
		}
	}
}

// checkView fails unless the broker at addr answers Metadata at once with
// three brokers and controller ctrl.
func checkView(t *testing.T, addr string, ctrl int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, got, err := view(ctx, addr)
	if err != nil || n != 3 || got != ctrl {
		t.Fatalf("broker %s without a quorum: %d brokers, controller %d, %v (want 3 brokers, controller %d)", addr, n, got, err, ctrl)
	}
}

// checkNumbered fails unless got holds every record produceBatch numbered
// below n for topic (a record written twice by a retry is counted once).
func checkNumbered(t *testing.T, got map[int32]map[int64]string, topic string, n int) {
	t.Helper()
	seen := map[string]int{}
	for _, recs := range got {
		for _, v := range recs {
			seen[v]++
		}
	}
	var missing []int
	for i := range n {
		if seen[fmt.Sprintf("%s-%06d", topic, i)] == 0 {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d of %d records missing from %s (%v ...)", len(missing), n, topic, missing[:min(10, len(missing))])
	}
}

// restartZK starts a killed ZooKeeper member again and waits until it serves.
func restartZK(t *testing.T, s *zktest.Server) {
	t.Helper()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
}

package campaign

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/chaos"
	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// TestStoreMemberCutKeepsSessions cuts each member of the 3-member store
// in turn from every other process for twice the session timeout (the
// campaign's store-minority fault, which found this): a majority stays
// reachable, so no broker may lose its session — its registration keeps
// its creation revision (the broker epoch) — and the controller keeps its
// epoch. A store client talks to every member; a member cut off by
// dropped packets leaves its connection open and silent, and a session
// whose keep-alive stream ran over it expired with it until the client
// learned to give such connections up within the session (etcdstore's
// keep-alive and TCP user timeout).
func TestStoreMemberCutKeepsSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	needNamespaces(ctx, t)
	const sessionMs = 6000
	c, err := chaos.StartCluster(ctx, chaos.Layout{Bin: samsaBin, Dir: t.TempDir(), Brokers: 3, SessionTimeoutMs: sessionMs},
		190+os.Getpid()%60) // the campaign test uses 90..189
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	store, err := c.ConnectStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	var before registrations
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		before, err = readRegistrations(ctx, store, len(c.Brokers))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster not up: %v", err)
		}
	}
	t.Logf("brokers registered with epochs %v, controller epoch %d", before.epochs, before.controllerEpoch)

	for _, s := range c.Stores {
		var rest []*chaos.Host
		for _, p := range append(append([]*chaos.Proc{}, c.Brokers...), c.Stores...) {
			if p != s {
				rest = append(rest, p.Host)
			}
		}
		for _, h := range rest {
			if err := c.Net.Cut(ctx, s.Host, h); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(2 * sessionMs * time.Millisecond)
		if err := c.Net.Heal(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // an expiry at the very end shows by now
		after, err := readRegistrations(ctx, store, len(c.Brokers))
		if err != nil {
			t.Fatalf("after cutting %s: %v", s.Name, err)
		}
		if after.String() != before.String() {
			t.Fatalf("cutting store member %s (a minority) for %v cost sessions: before %s, after %s",
				s.Name, 2*sessionMs*time.Millisecond, before, after)
		}
		t.Logf("%s cut for %v: every session kept", s.Name, 2*sessionMs*time.Millisecond)
	}
}

// registrations are the broker epochs (the creation revisions of their
// registrations) and the controller epoch.
type registrations struct {
	epochs          []int64
	controllerEpoch int64
}

func (r registrations) String() string {
	return fmt.Sprintf("broker epochs %v, controller epoch %d", r.epochs, r.controllerEpoch)
}

func readRegistrations(ctx context.Context, s metastore.Store, brokers int) (registrations, error) {
	var r registrations
	for id := int32(1); id <= int32(brokers); id++ {
		kv, ok, err := s.Get(ctx, metadata.BrokerKey(id))
		if err != nil || !ok {
			return r, fmt.Errorf("broker %d not registered (%v)", id, err)
		}
		r.epochs = append(r.epochs, kv.Created)
	}
	kv, ok, err := s.Get(ctx, metadata.ControllerEpochKey)
	if err != nil || !ok {
		return r, fmt.Errorf("no controller epoch (%v)", err)
	}
	if _, err := fmt.Sscan(string(kv.Value), &r.controllerEpoch); err != nil {
		return r, fmt.Errorf("controller epoch %q: %v", kv.Value, err)
	}
	if _, ok, err := s.Get(ctx, metadata.ControllerKey); err != nil || !ok {
		return r, fmt.Errorf("no controller (%v)", err)
	}
	return r, nil
}

package controller

import (
	"errors"
	"fmt"
	"testing"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// The store answers the active controller's first writes for a new topic
// with ErrUnavailable (no quorum): the controller tries again until it
// answers, within the same event and tenure, and the partition goes online.
func TestUnavailableStoreIsWaitedOut(t *testing.T) {
	cl := newCluster(t, 1, 2)
	cl.startupAll()
	tries := 0
	unavailable := func() error {
		tries++
		return fmt.Errorf("injected: %w", metastore.ErrUnavailable)
	}
	cl.nodes[1].client.beforeTxns(unavailable, unavailable)
	cl.createTopic("t", map[int32][]int32{0: {1, 2}})
	if tries != 2 {
		t.Fatalf("%d transactions found the store unavailable, want 2", tries)
	}
	if s := cl.state("t", 0); s.Leader != 1 {
		t.Fatalf("t-0 after the outage: %+v", s)
	}
	if a, e := cl.active(), cl.epoch(); len(a) != 1 || a[0] != 1 || e != 1 {
		t.Fatalf("active %v, epoch %d: want [1] at epoch 1 (no new tenure)", a, e)
	}
}

// An event that fails part way for another reason (here the first write
// for a new topic) leaves the controller's memory unsure: it reads the
// store again under a new epoch, from the store and not from its warm
// copy, and elects what the failed event did not.
func TestFailedEventReloadsFromTheStore(t *testing.T) {
	cl := newCluster(t, 1, 2)
	cl.startupAll()
	warm := cl.nodes[1].c.warmFailovers.Load()
	cl.nodes[1].client.beforeTxns(func() error { return errors.New("injected store failure") })
	cl.createTopic("t", map[int32][]int32{0: {1, 2}})
	if s := cl.state("t", 0); s.Leader != 1 {
		t.Fatalf("t-0 after the reload: %+v", s)
	}
	if a, e := cl.active(), cl.epoch(); len(a) != 1 || a[0] != 1 || e != 2 {
		t.Fatalf("active %v, epoch %d: want [1] at epoch 2 (a new tenure)", a, e)
	}
	if n := cl.nodes[1].c.warmFailovers.Load(); n != warm {
		t.Fatalf("the reload used the warm context (%d warm failovers, %d before)", n, warm)
	}
	if cl.nodes[1].c.stale {
		t.Fatal("still stale after the reload")
	}
}

package metadata

import (
	"context"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/metastore/memstore"
)

// A campaign whose write was applied without an answer is tried again by
// the controller's store and finds /controller taken: bound to its own
// session, it is its own, and won; bound to another's, lost.
func TestTryBecomeControllerAgainWithTheKeyOfItsSession(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	c := New(st.NewClient())
	mine, err := c.s.NewSession(ctx, 6*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.s.NewSession(ctx, 6*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	won, ver, err := c.TryBecomeController(ctx, mine, 1, time.Unix(1000, 0))
	if err != nil || !won {
		t.Fatalf("first campaign: won %v, err %v", won, err)
	}
	again, againVer, err := c.TryBecomeController(ctx, mine, 1, time.Unix(1001, 0))
	if err != nil || !again || againVer != ver {
		t.Fatalf("the campaign again with the same session: won %v version %d (want true, %d), err %v", again, againVer, ver, err)
	}
	lost, _, err := c.TryBecomeController(ctx, other, 2, time.Unix(1002, 0))
	if err != nil || lost {
		t.Fatalf("another session's campaign: won %v, err %v", lost, err)
	}
}

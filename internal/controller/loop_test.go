package controller

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// Store changes queued back to back reach the controller as one, in order
// and with the last revision; other events and snapshots keep their place.
func TestLoopMergesStoreChanges(t *testing.T) {
	l := NewLoop(New(Config{}))
	ev := func(key string) []metastore.Event {
		return []metastore.Event{{Type: metastore.EventPut, KV: metastore.KV{Key: key}}}
	}
	for _, e := range []Event{
		storeChange{events: ev("/a"), revision: 2},
		storeChange{events: ev("/b"), revision: 3},
		Expire{},
		storeChange{events: ev("/c"), revision: 4},
		storeChange{snapshot: true, revision: 5},
		storeChange{events: ev("/d"), revision: 6},
	} {
		l.Enqueue(e)
	}
	if n := l.QueueLen(); n != 6 {
		t.Fatalf("queue length %d, want 6", n)
	}
	var got []string
	for len(l.queue) > 0 {
		switch e := l.next().(type) {
		case storeChange:
			s := "change"
			if e.snapshot {
				s = "snapshot"
			}
			for _, ev := range e.events {
				s += " " + ev.KV.Key
			}
			got = append(got, s+" @"+string(rune('0'+e.revision)))
		default:
			got = append(got, e.name())
		}
	}
	if n := l.QueueLen(); n != 0 {
		t.Fatalf("queue length %d once taken, want 0", n)
	}
	want := []string{"change /a /b @3", "Expire", "change /c @4", "snapshot @5", "change /d @6"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

// unknownEvent is an event Handle has no case for.
type unknownEvent struct{}

func (unknownEvent) name() string { return "Unknown" }

// An event Handle does not know is not dropped silently: it is logged and
// counted.
func TestHandleCountsUnknownEvents(t *testing.T) {
	var log bytes.Buffer
	c := New(Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	c.Handle(context.Background(), unknownEvent{})
	if n := c.unknownEvents.Load(); n != 1 {
		t.Fatalf("%d unknown events counted, want 1", n)
	}
	if !strings.Contains(log.String(), "unknown event") || !strings.Contains(log.String(), "event=Unknown") {
		t.Fatalf("not logged: %q", log.String())
	}
}

// The loop tells its observer of each event it hands the controller, by
// name: here the store's changes (brokers registering, a topic created).
func TestLoopObservesEvents(t *testing.T) {
	cl := newCluster(t, 1, 2)
	seen := map[string]int{}
	cl.nodes[1].loop.ObserveEvents(func(event string, took time.Duration) {
		if took < 0 {
			t.Errorf("%s took %v", event, took)
		}
		seen[event]++
	})
	cl.startupAll()
	cl.createTopic("a", map[int32][]int32{0: {1, 2}})
	cl.settle()
	if seen["StoreChange"] == 0 {
		t.Errorf("no StoreChange observed: %v", seen)
	}
}

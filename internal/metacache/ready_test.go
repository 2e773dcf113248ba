package metacache

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Readiness driven step by step: "reg N" registers with broker epoch N,
// "um N" applies an UpdateMetadata carrying broker epoch N (refused ones
// included), "unready" is a lost registration; after each step the cache is
// ready or not as the script says, and Ready's channel agrees.
func TestReadiness(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps string // step=want, space-separated
	}{
		{"first start: register, then catch up", "um=0:- reg=10:- um=10:ready"},
		{"UpdateMetadata before register returns", "um=10:- reg=10:ready"},
		{"an UpdateMetadata for no registration", "um=-1:- reg=10:- um=-1:- um=10:ready"},
		{"a newer epoch counts (the controller knew first)", "reg=10:- um=12:ready"},
		{"session expired: stale UpdateMetadata does not count", "reg=10:- um=10:ready unready:- um=10:- reg=20:- um=10:- um=20:ready"},
		{"expired, and the new registration's UpdateMetadata came early", "reg=10:- um=10:ready unready:- um=20:- reg=20:ready"},
		{"ready stays ready across later registrations' bookkeeping", "reg=10:- um=10:ready um=10:ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(1)
			for _, step := range strings.Fields(tc.steps) {
				op, want, _ := strings.Cut(step, ":")
				verb, arg, _ := strings.Cut(op, "=")
				var n int64
				fmt.Sscan(arg, &n)
				switch verb {
				case "reg":
					c.SetBrokerEpoch(n)
				case "um":
					c.ApplyUpdateMetadata(updateMetadata(1, n, []int32{1}, part{"a", 1, 0, 1, 1, []int32{1}}))
				case "unready":
					c.Unready()
				}
				ch := c.Ready()
				closed := false
				select {
				case <-ch:
					closed = true
				default:
				}
				if got := c.IsReady(); got != (want == "ready") || closed != got {
					t.Fatalf("after %s: IsReady=%v, Ready() closed=%v, want %s", op, got, closed, want)
				}
			}
		})
	}
}

// A beat or a Ready call a stall's length after the last beat makes a ready
// cache unready at once and reports the stall once; it is ready again after
// a new registration and its UpdateMetadata.
func TestStallMakesUnready(t *testing.T) {
	var clock time.Duration
	var stalls []time.Duration
	c := New(1)
	c.WatchStalls(3*time.Second, func() time.Duration { return clock }, func(gap time.Duration) { stalls = append(stalls, gap) })
	c.SetBrokerEpoch(10)
	c.ApplyUpdateMetadata(updateMetadata(1, 10, []int32{1}, part{"a", 1, 0, 1, 1, []int32{1}}))
	for i := 0; i < 5; i++ { // regular beats
		clock += 100 * time.Millisecond
		c.Beat()
	}
	if !c.IsReady() || len(stalls) != 0 {
		t.Fatalf("after regular beats: ready=%v stalls=%v", c.IsReady(), stalls)
	}
	clock += 2999 * time.Millisecond // just short of the limit
	if !isClosed(c.Ready()) || len(stalls) != 0 {
		t.Fatalf("a gap short of the limit: ready=%v stalls=%v", c.IsReady(), stalls)
	}
	clock += 3 * time.Second // the process was stopped
	if isClosed(c.Ready()) || c.IsReady() || len(stalls) != 1 || stalls[0] != 5999*time.Millisecond {
		t.Fatalf("first Ready after a stall: ready=%v stalls=%v", c.IsReady(), stalls)
	}
	c.Beat() // the ticker's beat after the same stall: not a second one
	c.ApplyUpdateMetadata(updateMetadata(1, 10, []int32{1}))
	if c.IsReady() || len(stalls) != 1 {
		t.Fatalf("stale UpdateMetadata after the stall: ready=%v stalls=%v", c.IsReady(), stalls)
	}
	c.SetBrokerEpoch(20)
	c.ApplyUpdateMetadata(updateMetadata(1, 20, []int32{1}))
	if !isClosed(c.Ready()) {
		t.Fatal("not ready after registering again and catching up")
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

package loopback

import (
	"fmt"
	"net"
	"testing"
)

// The ports are distinct, below the ephemeral range, bindable, and not
// handed out again, even once their listener is gone.
func TestFreePortsDistinctAndBindable(t *testing.T) {
	seen := map[int]bool{}
	for range 20 {
		ps, err := FreePorts(5)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p < low || p >= high {
				t.Fatalf("port %d outside [%d, %d)", p, low, high)
			}
			if seen[p] {
				t.Fatalf("port %d handed out twice", p)
			}
			seen[p] = true
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				t.Fatalf("port %d: %v", p, err)
			}
			l.Close()
		}
	}
}

// A port some listener holds is not handed out.
func TestFreePortsSkipsBound(t *testing.T) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	bound := map[int]bool{}
	for p := low; p < low+2000; p++ {
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			held = append(held, l)
			bound[p] = true
		}
	}
	for range 200 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if bound[p] {
			t.Fatalf("port %d is held by a listener", p)
		}
	}
}

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestInternalExternalListeners: three brokers with an INTERNAL listener on
// 127.0.0.1 (inter.broker.listener.name) and an EXTERNAL one on 127.0.0.2.
// A client bootstrapping on either is told that listener's addresses, and
// produces and consumes through it; replication and controller traffic
// between the brokers goes over INTERNAL only (their own TCP connections,
// read from /proc/net/tcp).
func TestInternalExternalListeners(t *testing.T) {
	st := startStore(t, "samsa-store")
	l := startListenerCluster(t, st, false)
	procs, internal, external := l.procs, l.internal, l.external
	c := &cluster{t: t, procs: procs}
	c.waitView(procs[0].addr, "3 brokers and a controller", func(n int, ctrl int32) bool { return n == 3 && ctrl >= 0 })
	extAddr := func(id int32) string { return fmt.Sprintf("127.0.0.2:%d", external[id]) }
	c.waitView(extAddr(1), "3 brokers on EXTERNAL", func(n int, ctrl int32) bool { return n == 3 && ctrl >= 0 })

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, l := range []struct {
		seed  string
		host  string
		ports map[int32]int
	}{{procs[2].addr, "127.0.0.1", internal}, {extAddr(2), "127.0.0.2", external}} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(l.seed))
		if err != nil {
			t.Fatal(err)
		}
		m, err := kadm.NewClient(cl).BrokerMetadata(ctx)
		cl.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range m.Brokers {
			if b.Host != l.host || int(b.Port) != l.ports[b.NodeID] {
				t.Errorf("bootstrapped on %s: broker %d at %s:%d, want %s:%d", l.seed, b.NodeID, b.Host, b.Port, l.host, l.ports[b.NodeID])
			}
		}
	}

	// Through EXTERNAL only: create, produce acks=all (every replica
	// fetched), consume.
	c.createTopic([]string{extAddr(0)}, "orders", 3)
	ackAllPartitions(t, []string{extAddr(0)}, "orders", 3)
	cl, err := kgo.NewClient(kgo.SeedBrokers(extAddr(1)), kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := 0
	for got < 3 && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(*kgo.Record) { got++ })
	}
	if got < 3 {
		t.Fatalf("consumed %d records through EXTERNAL, want 3", got)
	}
	// FindCoordinator through EXTERNAL answers with an EXTERNAL address
	// (the first asks create __consumer_offsets: COORDINATOR_NOT_AVAILABLE
	// until it has leaders).
	for {
		r := kadm.NewClient(cl).FindGroupCoordinators(ctx, "g")["g"]
		if r.Err == nil {
			if r.Host != "127.0.0.2" || int(r.Port) != external[r.NodeID] {
				t.Errorf("coordinator %d at %s:%d, want its EXTERNAL address", r.NodeID, r.Host, r.Port)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no group coordinator: %v", r.Err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The brokers' own connections: to INTERNAL ports only.
	toInternal := 0
	for id, p := range procs {
		for _, port := range outgoing(t, p.cmd.Process.Pid) {
			for other := range procs {
				switch port {
				case internal[other]:
					toInternal++
				case external[other]:
					t.Errorf("broker %d has a connection to broker %d's EXTERNAL listener", id, other)
				}
			}
		}
	}
	if toInternal == 0 {
		t.Error("no broker-to-broker connection on INTERNAL: replication and the controller's channel went elsewhere")
	}
	t.Logf("%d broker-to-broker connections, all on INTERNAL", toInternal)
}

// listenerCluster is three brokers with INTERNAL (127.0.0.1,
// inter.broker.listener.name) and EXTERNAL (127.0.0.2) listeners, and a
// CONTROLLER one (127.0.0.1, control.plane.listener.name) if asked.
type listenerCluster struct {
	t                              *testing.T
	procs                          map[int32]*proc
	internal, external, controller map[int32]int
	dirs                           map[int32]string
	props                          map[int32][]string
}

func startListenerCluster(t *testing.T, st *storeProc, controlPlane bool) listenerCluster {
	l := listenerCluster{t: t, procs: map[int32]*proc{}, internal: map[int32]int{}, external: map[int32]int{}, controller: map[int32]int{},
		dirs: map[int32]string{}, props: map[int32][]string{}}
	for id := int32(0); id < 3; id++ {
		l.internal[id], l.external[id] = freePort(t), freePort(t)
		listeners := fmt.Sprintf("listeners=INTERNAL://127.0.0.1:%d,EXTERNAL://127.0.0.2:%d", l.internal[id], l.external[id])
		props := []string{fmt.Sprintf("broker.id=%d", id),
			"metadata.store.connect=" + st.endpoint + "/samsa-test",
			fmt.Sprintf("metadata.store.session.timeout.ms=%d", sessionTimeoutMs),
			"listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
			"inter.broker.listener.name=INTERNAL"}
		if controlPlane {
			l.controller[id] = freePort(t)
			listeners += fmt.Sprintf(",CONTROLLER://127.0.0.1:%d", l.controller[id])
			props = append(props, "control.plane.listener.name=CONTROLLER")
		}
		l.dirs[id], l.props[id] = t.TempDir(), append(props, listeners)
		l.procs[id] = startServer(t, l.dirs[id], l.internal[id], l.props[id]...)
	}
	return l
}

// restart stops broker id (SIGTERM) and starts it again on the same
// server.properties and log dir.
func (l listenerCluster) restart(id int32) {
	l.procs[id].stop()
	l.procs[id] = startServer(l.t, l.dirs[id], l.internal[id], l.props[id]...)
}

// TestControlPlaneListener: with control.plane.listener.name=CONTROLLER,
// the controller reaches every broker on its CONTROLLER listener, and
// replication still uses INTERNAL.
func TestControlPlaneListener(t *testing.T) {
	st := startStore(t, "samsa-store")
	l := startListenerCluster(t, st, true)
	c := &cluster{t: t, procs: l.procs}
	ctrl := c.waitView(l.procs[0].addr, "3 brokers and a controller", func(n int, ctrl int32) bool { return n == 3 && ctrl >= 0 })
	c.createTopic([]string{l.procs[1].addr}, "orders", 3)
	ackAllPartitions(t, []string{l.procs[1].addr}, "orders", 3)
	for id, p := range l.procs {
		reached := map[int32]bool{}
		toInternal := 0
		for _, port := range outgoing(t, p.cmd.Process.Pid) {
			for other := range l.procs {
				switch port {
				case l.controller[other]:
					reached[other] = true
				case l.internal[other]:
					toInternal++
				case l.external[other]:
					t.Errorf("broker %d has a connection to broker %d's EXTERNAL listener", id, other)
				}
			}
		}
		if id == ctrl && len(reached) != 3 {
			t.Errorf("the controller (broker %d) reached the CONTROLLER listeners of %v, want all 3 brokers", id, reached)
		}
		if id != ctrl && toInternal == 0 {
			t.Errorf("broker %d follows leaders without a connection to an INTERNAL listener", id)
		}
	}
}

// outgoing lists the remote ports of process pid's established TCP
// connections (both ends of the loopback connections it accepted are also
// in /proc/net/tcp, but only the sockets it owns count).
func outgoing(t *testing.T, pid int) []int {
	t.Helper()
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name())); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != "01" || !inodes[f[9]] { // 01: ESTABLISHED
			continue
		}
		_, remPort, _ := strings.Cut(f[2], ":")
		if port, err := strconv.ParseInt(remPort, 16, 32); err == nil {
			out = append(out, int(port))
		}
	}
	return out
}

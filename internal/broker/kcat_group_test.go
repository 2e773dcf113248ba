package broker

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-kafka/samsa/internal/group"
)

// kcatMember is one `kcat -G` process (librdkafka's balanced consumer).
type kcatMember struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder
	done chan struct{}
}

func (k *kcatMember) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.out.Write(p)
}

func (k *kcatMember) lines() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return strings.Fields(k.out.String())
}

func startKcatMember(t *testing.T, addr, groupID, topic string) *kcatMember {
	t.Helper()
	path, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("SAMSA_REQUIRE_KCAT") != "" {
			t.Fatal("kcat is required but not installed")
		}
		t.Skip("kcat not installed")
	}
	k := &kcatMember{done: make(chan struct{})}
	k.cmd = exec.Command(path, "-b", addr, "-G", groupID, "-q", "-u", "-f", "%s\n",
		"-X", "auto.offset.reset=earliest", "-X", "auto.commit.interval.ms=200", topic)
	k.cmd.Stdout = k
	if err := k.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { k.cmd.Wait(); close(k.done) }()
	t.Cleanup(func() { k.cmd.Process.Kill(); <-k.done })
	return k
}

// stop sends SIGTERM: kcat closes its consumer (commit, LeaveGroup).
func (k *kcatMember) stop(t *testing.T) {
	k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(30 * time.Second):
		t.Fatal("kcat did not stop on SIGTERM")
	}
}

// Three `kcat -G` members share a 6-partition topic: every record is
// consumed exactly once across them, a member leaving makes the others
// rebalance, and the offsets they commit reach the log end.
func TestKcatGroup(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"group.initial.rebalance.delay.ms": "1000"})
	cl := newClient(t, b, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	createTopic(t, cl, "kg", 6, nil)
	addr := b.Addr().String()
	var ms []*kcatMember
	for range 3 {
		ms = append(ms, startKcatMember(t, addr, "kg-group", "kg"))
	}
	adm := kadm.NewClient(cl)
	waitGroup(t, adm, "kg-group", 3)
	gen := describeLocal(t, b, "kg-group").Generation
	const n = 600
	produceValues(t, cl, "kg", 0, n)
	seen := map[string]int{}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		total := 0
		for _, m := range ms {
			total += len(m.lines())
		}
		if total >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kcat members consumed %d of %d", total, n)
		}
	}
	ms[0].stop(t)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		d := describeLocal(t, b, "kg-group")
		if d.State == group.Stable && len(d.Members) == 2 && d.Generation > gen {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no rebalance after a member left: %+v", d)
		}
	}
	ms[1].stop(t)
	ms[2].stop(t)
	for _, m := range ms {
		for _, l := range m.lines() {
			seen[l]++
		}
	}
	for i := range n {
		if c := seen["v"+strconv.Itoa(i)]; c != 1 {
			t.Fatalf("v%d consumed %d times", i, c)
		}
	}
	if got := committedTotal(t, adm, "kg-group"); got != n {
		t.Fatalf("committed offsets sum to %d, want %d", got, n)
	}
}

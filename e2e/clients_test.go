package e2e

// The Kafka clients beside franz-go and librdkafka (tested elsewhere) that
// applications use, each run as an application runs it against one
// cluster: sarama and segmentio/kafka-go (in this process), kafka-python
// (Debian's python3-kafka) and kafkajs (npm; scripts/test installs it in
// testdata/kafkajs). Each
// creates a topic, produces acks=all (idempotently and with transactions
// where the client can), consumes the topic through a consumer group and
// commits, leaves the group, reads its committed offsets and the group's
// state back with its own admin client, asks for the ACLs, and deletes the
// topic. The test
// checks what the client read and reported (clientRun.check), then that
// the topic and the group's offsets of it are gone.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
)

func TestKafkaClients(t *testing.T) {
	c := startTxnCluster(t)
	all := c.addrs(-1)
	t.Run("sarama", func(t *testing.T) {
		run := clientRun{client: "sarama", topic: "sarama-t", group: "sarama-g", n: 500, txn: true}
		run.lines = saramaApp(t, all, run)
		run.check(t, all)
	})
	t.Run("kafka-go", func(t *testing.T) {
		run := clientRun{client: "kafka-go", topic: "kafka-go-t", group: "kafka-go-g", n: 500}
		run.lines = kafkaGoApp(t, all, run)
		run.check(t, all)
	})
	t.Run("kafka-python", func(t *testing.T) {
		py := "/usr/bin/python3"
		if err := exec.Command(py, "-c", "import kafka").Run(); err != nil {
			requireOrSkip(t, "SAMSA_REQUIRE_KAFKA_PYTHON", "python3-kafka", err)
		}
		run := clientRun{client: "kafka-python", topic: "kafka-python-t", group: "kafka-python-g", n: 500}
		run.lines = runClient(t, py, "testdata/kafka_python_client.py", strings.Join(all, ","), run.topic, run.group, strconv.Itoa(run.n))
		run.check(t, all)
	})
	t.Run("kafkajs", func(t *testing.T) {
		if _, err := os.Stat("testdata/kafkajs/node_modules/kafkajs"); err != nil {
			requireOrSkip(t, "SAMSA_REQUIRE_KAFKAJS", "kafkajs (npm ci --prefix e2e/testdata/kafkajs)", err)
		}
		run := clientRun{client: "kafkajs", topic: "kafkajs-t", group: "kafkajs-g", n: 500, txn: true}
		run.lines = runClient(t, "node", "testdata/kafkajs/client.js", strings.Join(all, ","), run.topic, run.group, "kafkajs-txn", strconv.Itoa(run.n))
		run.check(t, all)
	})
}

// requireOrSkip fails the test when env is set (scripts/test installs
// what), else skips it.
func requireOrSkip(t *testing.T, env, what string, err error) {
	t.Helper()
	if os.Getenv(env) != "" {
		t.Fatalf("%s is required: %v", what, err)
	}
	t.Skipf("%s not installed: %v", what, err)
}

// runClient runs a client script and returns its output lines.
func runClient(t *testing.T, name string, args ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, args[0], err, stderr.String())
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// clientRun is one client's run: what it was asked to do and the lines
// it printed ("read PARTITION OFFSET VALUE", "committed PARTITION OFFSET",
// "group STATE MEMBERS", "acls ERROR": how describing ACLs failed).
type clientRun struct {
	client, topic, group string
	n                    int  // records produced, values CLIENT-0 ..
	txn                  bool // also one committed ("txn-commit") and one aborted ("txn-abort") transaction
	lines                []string
}

// check: every record produced was read once, the committed one of a
// transaction too and the aborted one never; the committed offsets the
// client read back are each partition's last offset read + 1; the group
// was Empty once the consumer left; describing ACLs failed with
// SECURITY_DISABLED, as on a Kafka without an authorizer; the topic and
// the group's offsets of it are gone once the client deleted it.
func (r clientRun) check(t *testing.T, addrs []string) {
	t.Helper()
	count := map[string]int{}
	last := map[int32]int64{}
	committed := map[int32]int64{}
	group, acls := "", ""
	for _, line := range r.lines {
		f := strings.Fields(line)
		switch {
		case len(f) == 4 && f[0] == "read":
			p, o := atoi32(t, f[1]), atoi64(t, f[2])
			count[f[3]]++
			last[p] = max(last[p], o)
		case len(f) == 3 && f[0] == "committed":
			committed[atoi32(t, f[1])] = atoi64(t, f[2])
		case len(f) == 3 && f[0] == "group":
			group = f[1] + " " + f[2]
		case len(f) == 2 && f[0] == "acls":
			acls = f[1]
		default:
			t.Fatalf("%s printed %q", r.client, line)
		}
	}
	for i := range r.n {
		if v := fmt.Sprintf("%s-%d", r.client, i); count[v] != 1 {
			t.Errorf("%s read %s %d times, want once", r.client, v, count[v])
		}
	}
	if r.txn {
		if count["txn-commit"] != 1 || count["txn-abort"] != 0 {
			t.Errorf("%s read the committed transaction's record %d times and the aborted one's %d, want 1 and 0",
				r.client, count["txn-commit"], count["txn-abort"])
		}
	}
	if len(last) != 3 {
		t.Errorf("%s read from partitions %v, want all 3", r.client, last)
	}
	for p, o := range last {
		if committed[p] != o+1 {
			t.Errorf("%s: partition %d committed at %d, want %d (after the last record read)", r.client, p, committed[p], o+1)
		}
	}
	if group != "Empty 0" {
		t.Errorf("%s: the group after its consumer left is %q, want Empty with 0 members", r.client, group)
	}
	if acls != "SECURITY_DISABLED" {
		t.Errorf("%s: describing ACLs failed with %q, want SECURITY_DISABLED (no authorizer)", r.client, acls)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(mustClient(t, addrs))
	for {
		td, err := adm.ListTopics(ctx)
		offs, oerr := adm.FetchOffsets(ctx, r.group)
		if err == nil && oerr == nil && !td.Has(r.topic) && len(offs[r.topic]) == 0 {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s deleted %s: still listed %v, group offsets %v (%v, %v)", r.client, r.topic, td.Has(r.topic), offs[r.topic], err, oerr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func atoi32(t *testing.T, s string) int32 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	return int32(v)
}

func atoi64(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// saramaApp is kafka_python_client.py's and kafkajs/client.js's run with
// sarama: an idempotent snappy producer, transactions, a read_committed
// consumer group; it returns the lines they would print.
func saramaApp(t *testing.T, addrs []string, r clientRun) []string {
	t.Helper()
	config := func() *sarama.Config {
		cfg := sarama.NewConfig()
		cfg.Version = sarama.V3_6_0_0
		cfg.ClientID = "samsa-e2e-sarama"
		return cfg
	}
	admin, err := sarama.NewClusterAdmin(addrs, config())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.CreateTopic(r.topic, &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: 3}, false); err != nil {
		t.Fatalf("create: %v", err)
	}

	pc := config()
	pc.Producer.Idempotent, pc.Net.MaxOpenRequests = true, 1
	pc.Producer.RequiredAcks = sarama.WaitForAll
	pc.Producer.Return.Successes = true
	pc.Producer.Compression = sarama.CompressionSnappy
	pc.Producer.Retry.Max = 20 // the topic's leaders may still be on their way
	p, err := sarama.NewSyncProducer(addrs, pc)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []*sarama.ProducerMessage
	for i := range r.n {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: r.topic, Key: sarama.StringEncoder(fmt.Sprint("k", i%10)),
			Value: sarama.StringEncoder(fmt.Sprintf("%s-%d", r.client, i))})
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatalf("produce: %v", err)
	}
	p.Close()

	tc := config()
	tc.Producer.Idempotent, tc.Net.MaxOpenRequests = true, 1
	tc.Producer.RequiredAcks = sarama.WaitForAll
	tc.Producer.Return.Successes = true
	tc.Producer.Transaction.ID = "sarama-txn"
	tp, err := sarama.NewSyncProducer(addrs, tc)
	if err != nil {
		t.Fatal(err)
	}
	for _, txn := range []struct {
		value  string
		commit bool
	}{{"txn-commit", true}, {"txn-abort", false}} {
		if err := tp.BeginTxn(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := tp.SendMessage(&sarama.ProducerMessage{Topic: r.topic, Value: sarama.StringEncoder(txn.value)}); err != nil {
			t.Fatal(err)
		}
		end := tp.AbortTxn
		if txn.commit {
			end = tp.CommitTxn
		}
		if err := end(); err != nil {
			t.Fatalf("end transaction (commit %v): %v", txn.commit, err)
		}
	}
	tp.Close()

	cc := config()
	cc.Consumer.Offsets.Initial = sarama.OffsetOldest
	cc.Consumer.Offsets.AutoCommit.Enable = false
	cc.Consumer.IsolationLevel = sarama.ReadCommitted
	cg, err := sarama.NewConsumerGroup(addrs, r.group, cc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := &saramaHandler{want: r.n + 1, done: make(chan struct{})}
	consumed := make(chan error, 1)
	go func() {
		for {
			if err := cg.Consume(ctx, []string{r.topic}, h); err != nil || ctx.Err() != nil {
				consumed <- err
				return
			}
		}
	}()
	select {
	case <-h.done:
	case <-ctx.Done():
		t.Fatalf("read %d of %d records within 60 s", len(h.read()), r.n+1)
	}
	cancel()
	if err := <-consumed; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("consume: %v", err)
	}
	if err := cg.Close(); err != nil {
		t.Fatal(err)
	}

	lines := h.read()
	offs, err := admin.ListConsumerGroupOffsets(r.group, map[string][]int32{r.topic: {0, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	for p, b := range offs.Blocks[r.topic] {
		if !errors.Is(b.Err, sarama.ErrNoError) {
			t.Fatalf("offset of partition %d: %v", p, b.Err)
		}
		lines = append(lines, fmt.Sprintf("committed %d %d", p, b.Offset))
	}
	gd, err := admin.DescribeConsumerGroups([]string{r.group})
	if err != nil {
		t.Fatal(err)
	}
	lines = append(lines, fmt.Sprintf("group %s %d", gd[0].State, len(gd[0].Members)))
	_, err = admin.ListAcls(sarama.AclFilter{ResourceType: sarama.AclResourceAny, Operation: sarama.AclOperationAny,
		PermissionType: sarama.AclPermissionAny, ResourcePatternTypeFilter: sarama.AclPatternAny})
	if errors.Is(err, sarama.ErrSecurityDisabled) {
		lines = append(lines, "acls SECURITY_DISABLED")
	} else {
		lines = append(lines, fmt.Sprintf("acls %q", fmt.Sprint(err)))
	}
	if err := admin.DeleteTopic(r.topic); err != nil {
		t.Fatalf("delete: %v", err)
	}
	return lines
}

// saramaHandler records the messages its claims deliver (ConsumeClaim runs
// on a goroutine per partition) and, once it has want, commits the marked
// offsets and closes done.
type saramaHandler struct {
	want  int
	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

func (h *saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *saramaHandler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		h.mu.Lock()
		if len(h.lines) < h.want {
			h.lines = append(h.lines, fmt.Sprintf("read %d %d %s", m.Partition, m.Offset, m.Value))
			s.MarkMessage(m, "")
			if len(h.lines) == h.want {
				s.Commit()
				close(h.done)
			}
		}
		h.mu.Unlock()
	}
	return nil
}

func (h *saramaHandler) read() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.lines...)
}

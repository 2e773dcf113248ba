package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// samsaTopics runs `samsa topics` and returns its output (stdout then
// stderr) and exit code.
func samsaTopics(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, errOut, code := samsaTool(t, 60*time.Second, "topics", args...)
	return out + errOut, code
}

// TestTopicsCLI drives `samsa topics` the kafka-topics.sh way against three
// `samsa server` processes: create RF 3, describe (Kafka's lines), grow,
// list, the errors' exit codes, delete.
func TestTopicsCLI(t *testing.T) {
	st := startStore(t, "samsa-store")
	c := startCluster(t, st.endpoint)
	c.waitView(c.procs[0].addr, "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	bs := strings.Join(c.addrs(-1), ",")

	if out, code := samsaTopics(t, "--bootstrap-server", bs, "--create", "--topic", "cli", "--partitions", "3", "--replication-factor", "3", "--config", "retention.ms=1000000"); code != 0 || !strings.Contains(out, "Created topic cli.") {
		t.Fatalf("create: exit %d\n%s", code, out)
	}
	out, code := samsaTopics(t, "--bootstrap-server", bs, "--describe", "--topic", "cli")
	if code != 0 {
		t.Fatalf("describe: exit %d\n%s", code, out)
	}
	header := regexp.MustCompile(`Topic: cli\tTopicId: \S+\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: .*retention.ms=1000000`)
	part := regexp.MustCompile(`\tTopic: cli\tPartition: (\d)\tLeader: (\d)\tReplicas: (\d,\d,\d)\tIsr: (\d,\d,\d)`)
	if !header.MatchString(out) || len(part.FindAllString(out, -1)) != 3 {
		t.Fatalf("describe output not Kafka's:\n%s", out)
	}
	leaders := map[string]bool{}
	for _, m := range part.FindAllStringSubmatch(out, -1) {
		leaders[m[2]] = true
	}
	if len(leaders) != 3 {
		t.Fatalf("leaders not spread over the brokers:\n%s", out)
	}
	if out, code := samsaTopics(t, "--bootstrap-server", bs, "--alter", "--topic", "cli", "--partitions", "5"); code != 0 {
		t.Fatalf("alter: exit %d\n%s", code, out)
	}
	if out, _ := samsaTopics(t, "--bootstrap-server", bs, "--describe", "--topic", "cli"); len(part.FindAllString(out, -1)) != 5 {
		t.Fatalf("after alter:\n%s", out)
	}
	if out, code := samsaTopics(t, "--bootstrap-server", bs, "--list"); code != 0 || !strings.Contains(out, "cli\n") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	if out, code := samsaTopics(t, "--bootstrap-server", bs, "--create", "--topic", "cli", "--partitions", "1"); code != 1 || !strings.Contains(out, "Error while executing topic command") {
		t.Fatalf("create existing: exit %d\n%s", code, out)
	}
	if out, code := samsaTopics(t, "--bootstrap-server", bs, "--create", "--partitions", "1"); code != 1 {
		t.Fatalf("create without --topic: exit %d\n%s", code, out)
	}
	if out, code := samsaTopics(t, "--bootstrap-server", bs, "--delete", "--topic", "cli"); code != 0 {
		t.Fatalf("delete: exit %d\n%s", code, out)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _ := samsaTopics(t, "--bootstrap-server", bs, "--list")
		if !strings.Contains(out, "cli\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deleted topic still listed:\n%s", out)
		}
	}
}

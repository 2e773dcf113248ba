package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

// kafkaGoApp is kafka_python_client.py's run with segmentio/kafka-go: its
// Writer (acks=all, lz4) and its consumer-group Reader, committing each
// message; it has no transactional producer. It also asks for a user's
// SCRAM credentials (none: RESOURCE_NOT_FOUND) and for a preferred leader
// election with the client's default timeout of 0, which Kafka answers
// ELECTION_NOT_NEEDED for partitions led by their preferred replica. It
// returns the lines the scripts would print.
func kafkaGoApp(t *testing.T, addrs []string, r clientRun) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl := &kafka.Client{Addr: kafka.TCP(addrs...), Timeout: 15 * time.Second}
	ct, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: r.topic, NumPartitions: 3, ReplicationFactor: 3}}})
	if err == nil {
		err = ct.Errors[r.topic]
	}
	if err != nil {
		t.Fatalf("create: %v", err)
	}

	w := &kafka.Writer{Addr: kafka.TCP(addrs...), Topic: r.topic, Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll,
		Compression: kafka.Lz4, BatchTimeout: 5 * time.Millisecond, MaxAttempts: 20}
	var msgs []kafka.Message
	for i := range r.n {
		msgs = append(msgs, kafka.Message{Key: fmt.Appendf(nil, "k%d", i%10), Value: fmt.Appendf(nil, "%s-%d", r.client, i)})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("produce: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	rd := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, GroupID: r.group, Topic: r.topic, StartOffset: kafka.FirstOffset,
		MaxWait: 500 * time.Millisecond, HeartbeatInterval: time.Second, SessionTimeout: 10 * time.Second})
	var lines []string
	for len(lines) < r.n {
		m, err := rd.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("read %d of %d records: %v", len(lines), r.n, err)
		}
		lines = append(lines, fmt.Sprintf("read %d %d %s", m.Partition, m.Offset, m.Value))
		if err := rd.CommitMessages(ctx, m); err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	if err := rd.Close(); err != nil { // leaves the group
		t.Fatal(err)
	}

	of, err := cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: r.group, Topics: map[string][]int{r.topic: {0, 1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range of.Topics[r.topic] {
		if p.Error != nil {
			t.Fatalf("offset of partition %d: %v", p.Partition, p.Error)
		}
		lines = append(lines, fmt.Sprintf("committed %d %d", p.Partition, p.CommittedOffset))
	}
	dg, err := cl.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{r.group}})
	if err != nil || len(dg.Groups) != 1 || dg.Groups[0].Error != nil {
		t.Fatalf("describe group: %v %+v", err, dg)
	}
	lines = append(lines, fmt.Sprintf("group %s %d", dg.Groups[0].GroupState, len(dg.Groups[0].Members)))
	da, err := cl.DescribeACLs(ctx, &kafka.DescribeACLsRequest{Filter: kafka.ACLFilter{ResourceTypeFilter: kafka.ResourceTypeAny,
		ResourcePatternTypeFilter: kafka.PatternTypeAny, Operation: kafka.ACLOperationTypeAny, PermissionType: kafka.ACLPermissionTypeAny}})
	switch {
	case err != nil:
		lines = append(lines, fmt.Sprintf("acls %q", err.Error()))
	case errors.Is(da.Error, kafka.SecurityDisabled):
		lines = append(lines, "acls SECURITY_DISABLED")
	default:
		lines = append(lines, fmt.Sprintf("acls %q", fmt.Sprint(da.Error)))
	}

	// No user has a SCRAM credential: Samsa has no SASL.
	ds, err := cl.DescribeUserScramCredentials(ctx, &kafka.DescribeUserScramCredentialsRequest{Users: []kafka.UserScramCredentialsUser{{Name: "alice"}}})
	if err != nil || ds.Error != nil || len(ds.Results) != 1 || !errors.Is(ds.Results[0].Error, kafka.ResourceNotFound) {
		t.Errorf("describe SCRAM credentials of alice: %v %+v, want RESOURCE_NOT_FOUND", err, ds)
	}

	el, err := cl.ElectLeaders(ctx, &kafka.ElectLeadersRequest{Topic: r.topic, Partitions: []int{0, 1, 2}})
	if err != nil || el.Error != nil || len(el.PartitionResults) != 3 {
		t.Fatalf("elect leaders: %v %+v", err, el)
	}
	for _, p := range el.PartitionResults {
		if !errors.Is(p.Error, kafka.ElectionNotNeeded) {
			t.Errorf("preferred election of %s-%d with timeout 0: %v, want ELECTION_NOT_NEEDED", r.topic, p.Partition, p.Error)
		}
	}

	dt, err := cl.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{r.topic}})
	if err == nil {
		err = dt.Errors[r.topic]
	}
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	return lines
}

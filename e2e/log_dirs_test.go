package e2e

// Several log.dirs: a broker spreads new partitions over its dirs (fewest
// partitions first, as Kafka's LogManager), and DescribeLogDirs, through
// `samsa log-dirs --describe`, reports each dir's partitions and sizes;
// AlterReplicaLogDirs refuses moves (no future replicas).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestLogDirsDescribe(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	p := startServer(t, a, freePort(t), "log.dirs="+a+","+b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic("dirs"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if res, err := kadm.NewClient(cl).CreateTopic(ctx, 4, 1, nil, "dirs"); err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	for part := range int32(4) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: part, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := samsaTool(t, time.Minute, "log-dirs", "--describe", "--bootstrap-server", p.addr, "--topic-list", "dirs")
	lines := strings.SplitN(out, "\n", 3)
	if code != 0 || len(lines) < 3 || lines[0] != "Querying brokers for log directories information" ||
		lines[1] != "Received log directory information from brokers 0" {
		t.Fatalf("samsa log-dirs: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	var doc struct {
		Brokers []struct {
			Broker  int32
			LogDirs []struct {
				LogDir     string
				Error      *string
				Partitions []struct {
					Partition string
					Size      int64
					OffsetLag int64
					IsFuture  bool
				}
			}
		}
		Version int
	}
	if err := json.Unmarshal([]byte(lines[2]), &doc); err != nil || doc.Version != 1 || len(doc.Brokers) != 1 {
		t.Fatalf("JSON %q: %v", lines[2], err)
	}
	perDir := map[string][]string{}
	for _, d := range doc.Brokers[0].LogDirs {
		if d.Error != nil {
			t.Errorf("dir %s: error %s", d.LogDir, *d.Error)
		}
		for _, dp := range d.Partitions {
			if dp.Size <= 0 || dp.OffsetLag != 0 || dp.IsFuture {
				t.Errorf("dir %s partition %+v", d.LogDir, dp)
			}
			perDir[d.LogDir] = append(perDir[d.LogDir], dp.Partition)
		}
	}
	if len(perDir[a]) != 2 || len(perDir[b]) != 2 {
		t.Fatalf("partitions per dir: %v, want 2 in each of %s and %s", perDir, a, b)
	}
	// AlterReplicaLogDirs: staying is a no-op, a move is refused, an
	// unknown dir is not found.
	var inA int32
	fmt.Sscanf(strings.TrimPrefix(perDir[a][0], "dirs-"), "%d", &inA)
	adm := kadm.NewClient(cl)
	for _, c := range []struct {
		dir  string
		want error
	}{{a, nil}, {b, kerr.KafkaStorageError}, {filepath.Join(b, "nope"), kerr.LogDirNotFound}} {
		var req kadm.AlterReplicaLogDirsReq
		req.Add(c.dir, kadm.TopicsSet{"dirs": {inA: {}}})
		res, err := adm.AlterBrokerReplicaLogDirs(ctx, 0, req)
		if err != nil {
			t.Fatal(err)
		}
		res.Each(func(r kadm.AlterReplicaLogDirsResponse) {
			if !errors.Is(r.Err, c.want) && r.Err != c.want {
				t.Errorf("move dirs-%d to %s: %v, want %v", inA, c.dir, r.Err, c.want)
			}
		})
	}
	if !strings.HasPrefix(lines[2], `{"brokers":[{"broker":0,"logDirs":[{"partitions":[{"partition":"dirs-`) {
		t.Errorf("key order differs from kafka-log-dirs.sh: %s", lines[2])
	}
}

package api

// DescribeLogDirs (key 35), v0–4 (Kafka's ReplicaManager.describeLogDirs):
// every directory of log.dirs with the partitions it holds: all, or those
// of the requested topics and partitions (null topics: all). Per partition
// the size of its .log files, offset_lag max(HW - LEO, 0) (always 0: Samsa
// has no future replicas, whose lag Kafka reports against the current
// one) and is_future false; v4 adds the file system's total and usable
// bytes. Directories never go offline in Samsa (a failing disk stops the
// broker), so their error code is always 0.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// LogDirs describes the broker's log directories: *storage.Manager.
type LogDirs interface {
	DescribeDirs() []storage.DirInfo
	Dirs() []string
}

func (h *Handler) describeLogDirs(req *kmsg.DescribeLogDirsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	if h.LogDirs == nil {
		return resp
	}
	var want map[kafka.TopicPartition]bool // nil: all
	if req.Topics != nil {
		want = map[kafka.TopicPartition]bool{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				want[kafka.TopicPartition{Topic: t.Topic, Partition: p}] = true
			}
		}
	}
	for _, d := range h.LogDirs.DescribeDirs() {
		rd := kmsg.NewDescribeLogDirsResponseDir()
		rd.Dir, rd.TotalBytes, rd.UsableBytes = d.Path, d.TotalBytes, d.UsableBytes
		if d.Offline { // as Kafka: the error, no partitions
			rd.ErrorCode = kerr.KafkaStorageError.Code
			resp.Dirs = append(resp.Dirs, rd)
			continue
		}
		byTopic := map[string]int{}
		for _, l := range d.Logs {
			if want != nil && !want[l.TP] {
				continue
			}
			i, ok := byTopic[l.TP.Topic]
			if !ok {
				i = len(rd.Topics)
				byTopic[l.TP.Topic] = i
				t := kmsg.NewDescribeLogDirsResponseDirTopic()
				t.Topic = l.TP.Topic
				rd.Topics = append(rd.Topics, t)
			}
			p := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			p.Partition, p.Size = l.TP.Partition, l.Size
			rd.Topics[i].Partitions = append(rd.Topics[i].Partitions, p)
		}
		resp.Dirs = append(resp.Dirs, rd)
	}
	return resp
}

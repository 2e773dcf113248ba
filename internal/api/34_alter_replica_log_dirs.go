package api

// AlterReplicaLogDirs (key 34), v0–2 (Kafka's
// ReplicaManager.alterReplicaLogDirs), served without moving anything:
// Samsa has no future replicas (the "-future" copy Kafka fills and swaps
// in). Per partition: a dir not among log.dirs answers LOG_DIR_NOT_FOUND;
// a partition not hosted here answers 0 (Kafka only remembers the
// preferred dir then, for a later creation: Samsa places new partitions in
// the least loaded dir instead); a partition already in the requested dir
// answers 0, as Kafka's no-op; a move to another dir is refused with
// KAFKA_STORAGE_ERROR, the error Kafka uses when it cannot host the
// replica in that dir.

import (
	"path/filepath"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

func (h *Handler) alterReplicaLogDirs(req *kmsg.AlterReplicaLogDirsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	var dirs []string
	if h.LogDirs != nil {
		for _, d := range h.LogDirs.Dirs() {
			dirs = append(dirs, cleanDir(d))
		}
	}
	byTopic := map[string]int{}
	for _, rd := range req.Dirs {
		dir := cleanDir(rd.Dir)
		known := slices.Contains(dirs, dir)
		for _, rt := range rd.Topics {
			i, ok := byTopic[rt.Topic]
			if !ok {
				i = len(resp.Topics)
				byTopic[rt.Topic] = i
				t := kmsg.NewAlterReplicaLogDirsResponseTopic()
				t.Topic = rt.Topic
				resp.Topics = append(resp.Topics, t)
			}
			for _, part := range rt.Partitions {
				sp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
				sp.Partition = part
				sp.ErrorCode = h.replicaDirCode(kafka.TopicPartition{Topic: rt.Topic, Partition: part}, dir, known)
				resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, sp)
			}
		}
	}
	return resp
}

// replicaDirCode is the answer for moving tp to dir (known: among log.dirs).
func (h *Handler) replicaDirCode(tp kafka.TopicPartition, dir string, known bool) int16 {
	if !known {
		return kerr.LogDirNotFound.Code
	}
	p := h.Partitions.Get(tp)
	if p == nil || cleanDir(p.Log().LogDir()) == dir {
		return 0
	}
	return kerr.KafkaStorageError.Code
}

// cleanDir is a dir's absolute path, as Kafka compares them.
func cleanDir(d string) string {
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return filepath.Clean(d)
}

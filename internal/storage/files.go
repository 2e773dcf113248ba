package storage

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// Kafka's file names in a log directory.
const (
	recoveryCheckpointFile = "recovery-point-offset-checkpoint"
	cleanShutdownFile      = ".kafka_cleanshutdown"
	lockFile               = ".lock"
	partitionMetadataFile  = "partition.metadata"
)

// fsyncDisabled turns every fsync into a no-op; tests creating tens of
// thousands of partitions set it. Never set in production code.
var fsyncDisabled atomic.Bool

func fsync(f *os.File) error {
	if fsyncDisabled.Load() {
		return nil
	}
	return f.Sync()
}

// syncDir fsyncs a directory so that creates and renames in it are durable.
func syncDir(dir string) error {
	if fsyncDisabled.Load() {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("storage: fsync dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("storage: fsync dir: %w", err)
	}
	return nil
}

// writeFileSync writes a file atomically: temp file, fsync, rename, fsync
// of the directory.
func writeFileSync(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("storage: write %s: %w", filepath.Base(path), err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = fsync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("storage: write %s: %w", filepath.Base(path), err)
	}
	return syncDir(filepath.Dir(path))
}

// encodeCheckpoint renders Kafka's offset checkpoint format: version line,
// count line, then "topic partition offset" lines.
func encodeCheckpoint(offsets map[kafka.TopicPartition]int64) []byte {
	tps := make([]kafka.TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(tps))
	for _, tp := range tps {
		fmt.Fprintf(&b, "%s %d %d\n", tp.Topic, tp.Partition, offsets[tp])
	}
	return b.Bytes()
}

// parseCheckpoint reads Kafka's offset checkpoint format.
func parseCheckpoint(data []byte) (map[kafka.TopicPartition]int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		return sc.Text(), true
	}
	v, ok := line()
	if !ok || strings.TrimSpace(v) != "0" {
		return nil, fmt.Errorf("storage: checkpoint: unsupported version %q", v)
	}
	c, ok := line()
	n, err := strconv.Atoi(strings.TrimSpace(c))
	if !ok || err != nil || n < 0 {
		return nil, fmt.Errorf("storage: checkpoint: bad count %q", c)
	}
	out := make(map[kafka.TopicPartition]int64, min(n, 1<<16))
	for i := 0; i < n; i++ {
		l, ok := line()
		f := strings.Fields(l)
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("storage: checkpoint: bad entry %q", l)
		}
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		o, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("storage: checkpoint: bad entry %q", l)
		}
		out[kafka.TopicPartition{Topic: f[0], Partition: int32(p)}] = o
	}
	return out, nil
}

// encodePartitionMetadata renders Kafka's partition.metadata file.
func encodePartitionMetadata(id [16]byte) []byte {
	return []byte("version: 0\ntopic_id: " + base64.RawURLEncoding.EncodeToString(id[:]) + "\n")
}

func readPartitionMetadata(dir string) ([16]byte, error) {
	var id [16]byte
	data, err := os.ReadFile(filepath.Join(dir, partitionMetadataFile))
	if err != nil {
		return id, fmt.Errorf("storage: partition.metadata: %w", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "version":
			if strings.TrimSpace(v) != "0" {
				return id, fmt.Errorf("storage: partition.metadata: unsupported version %q", v)
			}
		case "topic_id":
			b, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(v))
			if err != nil || len(b) != 16 {
				return id, fmt.Errorf("storage: partition.metadata: bad topic id %q", v)
			}
			copy(id[:], b)
			return id, nil
		}
	}
	return id, fmt.Errorf("storage: partition.metadata: no topic_id")
}

// validTopic accepts Kafka's legal topic names, which are also safe path
// components.
func validTopic(t string) bool {
	if t == "" || t == "." || t == ".." || len(t) > 249 {
		return false
	}
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

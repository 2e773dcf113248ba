package storage

import (
	"path/filepath"
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// partitionDir is filepath.Join whatever the log dir looks like.
func TestPartitionDirIsJoin(t *testing.T) {
	tp := kafka.TopicPartition{Topic: "a.b_c-d", Partition: 12}
	for _, dir := range []string{"/var/lib/samsa", "/var/lib/samsa/", "rel/dir", "rel/../dir", "/", "", ".", "a//b"} {
		if got, want := partitionDir(dir, tp), filepath.Join(dir, tp.String()); got != want {
			t.Errorf("partitionDir(%q) = %q, want %q", dir, got, want)
		}
	}
}

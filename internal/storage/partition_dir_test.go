package storage

import (
	"path/filepath"
	"testing"
)

// partitionDir is filepath.Join whatever the log dir looks like.
func TestPartitionDirIsJoin(t *testing.T) {
	tp := TopicPartition{Topic: "a.b_c-d", Partition: 12}
	for _, dir := range []string{"/var/lib/samsa", "/var/lib/samsa/", "rel/dir", "rel/../dir", "/", "", ".", "a//b"} {
		if got, want := partitionDir(dir, tp), filepath.Join(dir, tp.dirName()); got != want {
			t.Errorf("partitionDir(%q) = %q, want %q", dir, got, want)
		}
	}
}

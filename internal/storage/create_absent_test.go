package storage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// A large CreateMany checks for foreign directories with one listing of
// the log dir instead of an lstat each; both ways find the same ones, and
// only an exact "<topic>-<partition>" name counts.
func TestCheckAbsentListing(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"x-40", "x-041", "x-42.abc-delete", "x-43x", "recovery-point-offset-checkpoint"} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d, other := &logDir{path: dir}, &logDir{path: t.TempDir()}
	batch := func(from, to int32) [][]Log {
		var ls []Log
		for p := from; p < to; p++ {
			ls = append(ls, Log{tp: kafka.TopicPartition{Topic: "x", Partition: p}, dirs: d})
		}
		// Logs of another dir are not d's to check.
		return [][]Log{ls, {{tp: kafka.TopicPartition{Topic: "x", Partition: 40}, dirs: other}}}
	}
	if !listPays(dir, 100) || listPays(dir, 1) {
		t.Fatal("listing not chosen for 100 partitions in a small directory, or chosen for 1")
	}
	for _, check := range []func(*logDir, [][]Log) error{lstatAbsent, listAbsent} {
		if err := check(d, batch(0, 100)); !errors.Is(err, os.ErrExist) {
			t.Fatalf("x-40 not found: %v", err)
		}
		if err := check(d, batch(41, 100)); err != nil {
			t.Fatalf("x-041, x-42.abc-delete or x-43x taken for a partition's: %v", err)
		}
	}
	m := openManager(t, t.TempDir())
	defer m.Close()
	var reqs []CreateRequest
	for p := range int32(100) {
		reqs = append(reqs, CreateRequest{kafka.TopicPartition{Topic: "y", Partition: p}, topic, DefaultLogConfig()})
	}
	if err := os.Mkdir(filepath.Join(m.dirs[0].path, "y-77"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CreateMany(reqs); !errors.Is(err, os.ErrExist) || len(m.Partitions()) != 0 {
		t.Fatalf("foreign y-77: err %v, %d registered", err, len(m.Partitions()))
	}
}

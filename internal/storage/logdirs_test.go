package storage

import (
	"os"
	"path/filepath"
	"testing"
)

// log.dirs given relative to the working directory are held, described
// and named absolute, as Kafka's LogManager holds them: DescribeLogDirs
// reports the absolute path and AlterReplicaLogDirs must name it.
func TestLogDirsAbsolute(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	if err := os.Mkdir("data", 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := OpenManager(ManagerConfig{Dirs: []string{"data/a", "./data/b"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	want := []string{filepath.Join(wd, "data", "a"), filepath.Join(wd, "data", "b")}
	for i, d := range m.Dirs() {
		if d != want[i] {
			t.Errorf("Dirs()[%d] = %q, want %q", i, d, want[i])
		}
	}
	for i, d := range m.DescribeDirs() {
		if d.Path != want[i] {
			t.Errorf("DescribeDirs()[%d].Path = %q, want %q", i, d.Path, want[i])
		}
	}
}

package storage

import (
	"os"
	"syscall"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// DirInfo describes one log directory for DescribeLogDirs: its path, the
// file system's total and usable bytes (-1 if unknown), and the partitions
// it holds with their sizes; Offline if an I/O error took it offline
// (offline.go).
type DirInfo struct {
	Path                    string
	TotalBytes, UsableBytes int64
	Logs                    []LogInfo
	Offline                 bool
}

// LogInfo is one partition of a log dir: the bytes of its segments' .log
// files (Kafka's UnifiedLog.size).
type LogInfo struct {
	TP   kafka.TopicPartition
	Size int64
}

// DescribeDirs lists the manager's log dirs with their partitions, in the
// order of log.dirs. A log not loaded is sized from its files without
// loading it; a lazy log (never written) has size 0.
func (m *Manager) DescribeDirs() []DirInfo {
	out := make([]DirInfo, len(m.dirs))
	index := make(map[*logDir]int, len(m.dirs))
	for i, d := range m.dirs {
		out[i] = DirInfo{Path: d.path, TotalBytes: -1, UsableBytes: -1, Offline: d.offline.Load()}
		var st syscall.Statfs_t
		if syscall.Statfs(d.path, &st) == nil {
			out[i].TotalBytes = int64(st.Blocks) * st.Bsize
			out[i].UsableBytes = int64(st.Bavail) * st.Bsize
		}
		index[d] = i
	}
	for _, l := range m.snapshot() {
		i, ok := index[l.dirs]
		if !ok {
			continue
		}
		out[i].Logs = append(out[i].Logs, LogInfo{TP: l.tp, Size: l.size()})
	}
	return out
}

// size is the bytes of the log's .log files, from memory when loaded and
// from the files otherwise.
func (l *Log) size() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed || l.lazy.Load() {
		return 0
	}
	var n int64
	if l.loaded.Load() {
		for _, s := range l.segs {
			n += s.size
		}
		return n
	}
	bases, err := listSegments(l.dir())
	if err != nil {
		return 0
	}
	for _, b := range bases {
		if fi, err := os.Stat(segmentPath(l.dir(), b) + ".log"); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// Dirs lists the manager's log dirs, in the order of log.dirs.
func (m *Manager) Dirs() []string {
	out := make([]string, len(m.dirs))
	for i, d := range m.dirs {
		out[i] = d.path
	}
	return out
}

// LogDir is the log dir holding the log.
func (l *Log) LogDir() string { return l.dirs.path }

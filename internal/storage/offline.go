package storage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Log dir failure (Kafka's LogDirFailureChannel, KIP-112): an I/O error
// while writing to a log dir — appending, rolling, flushing, truncating,
// writing an index, a snapshot or a checkpoint, deleting segments — takes
// the whole dir offline, once. From then on every log in it refuses reads
// and writes with ErrKafkaStorage (KAFKA_STORAGE_ERROR to clients), the
// manager writes nothing more there (no checkpoint, no clean-shutdown
// marker at Close) and creates no new log there, and
// ManagerConfig.OnDirFailure is called on the goroutine that hit the
// error. Validation errors and ErrLogClosed are not I/O errors. A dir
// comes back only with a restart, as in Kafka.

// ErrKafkaStorage is the error of a log whose dir is offline, and of the
// write that took it offline (wrapping the I/O error).
var ErrKafkaStorage = errors.New("storage: log dir offline")

// DirFailure reports a log dir gone offline.
type DirFailure struct {
	Dir    string   // the dir that failed
	Err    error    // the I/O error that took it offline
	Online []string // the dirs still online, in configuration order
}

// isIOError says whether err comes from the file system rather than from
// the rules of the log. A name already taken (a partition directory that
// appeared after startup, lazy.go) is refused as such: the disk is fine.
func isIOError(err error) bool {
	if errors.Is(err, os.ErrExist) {
		return false
	}
	var pe *os.PathError
	var le *os.LinkError
	var se *os.SyscallError
	var errno syscall.Errno
	return errors.As(err, &pe) || errors.As(err, &le) || errors.As(err, &se) || errors.As(err, &errno) ||
		errors.Is(err, io.ErrShortWrite)
}

// failed takes d offline if err is an I/O error (Kafka's
// maybeAddOfflineLogDir) and returns the error to report: err wrapped in
// ErrKafkaStorage then, else err unchanged.
func (d *logDir) failed(err error) error {
	if err == nil || errors.Is(err, ErrKafkaStorage) || !isIOError(err) {
		return err
	}
	if d.offline.CompareAndSwap(false, true) && d.onFail != nil {
		d.onFail(d, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrKafkaStorage, d.path, err)
}

// offlineErr is the error of a log in an offline dir.
func (l *Log) offlineErr() error {
	return fmt.Errorf("%w: partition %s is in offline log dir %s", ErrKafkaStorage, l.tp, l.dirs.path)
}

// dirFailed is every dir's onFail: it logs the failure and reports it.
func (m *Manager) dirFailed(d *logDir, err error) {
	m.log.Error("storage: log dir failed, its partitions are offline", "dir", d.path, "err", err)
	if m.cfg.OnDirFailure != nil {
		m.cfg.OnDirFailure(DirFailure{Dir: d.path, Err: err, Online: m.OnlineDirs()})
	}
}

// OnlineDirs lists the log dirs not offline, in configuration order.
func (m *Manager) OnlineDirs() []string {
	var out []string
	for _, d := range m.dirs {
		if !d.offline.Load() {
			out = append(out, d.path)
		}
	}
	return out
}

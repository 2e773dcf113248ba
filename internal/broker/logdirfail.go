package broker

import (
	"fmt"
	"os"
	"strings"

	"github.com/samsa-kafka/samsa/internal/storage"
)

// onLogDirFailure is the log manager's report of a log dir that an I/O
// error took offline (storage/offline.go), Kafka's LogDirFailureHandler.
// The dir's partitions answer KAFKA_STORAGE_ERROR from then on. With every
// log dir offline the broker halts at once, as Kafka's
// LogManager.handleLogDirFailure (Exit.halt(1)): no clean shutdown, so its
// store session ends and the controller moves its leaderships to the other
// replicas in the ISR.
//
// Not done (Kafka's ZooKeeper-mode /log_dir_event_notification): with some
// log dirs still online the controller is not told, so the partitions of
// the failed dir keep their leader here, answering KAFKA_STORAGE_ERROR,
// until the broker restarts.
func (b *Broker) onLogDirFailure(f storage.DirFailure) {
	if len(f.Online) == 0 {
		b.log.Error(fmt.Sprintf("Shutdown broker because all log dirs in %s have failed", strings.Join(b.cfg.LogDirs, ", ")), "err", f.Err)
		os.Exit(1)
	}
	b.log.Error(fmt.Sprintf("Stopped serving replicas in dir %s", f.Dir), "err", f.Err, "online", f.Online)
}

package api

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/storage"
)

// A log in an offline log dir, and the write that took the dir offline,
// answer KAFKA_STORAGE_ERROR (retriable: clients refresh their metadata),
// not UNKNOWN_SERVER_ERROR.
func TestErrorCodeKafkaStorage(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("%w: partition t-0 is in offline log dir /d", storage.ErrKafkaStorage),
		fmt.Errorf("%w: /d: %w", storage.ErrKafkaStorage, fmt.Errorf("storage: append: %w", syscall.ENOSPC)),
	} {
		if got := errorCode(err); got != kerr.KafkaStorageError.Code {
			t.Errorf("errorCode(%v) = %d, want %d", err, got, kerr.KafkaStorageError.Code)
		}
	}
	if !kerr.IsRetriable(kerr.ErrorForCode(kerr.KafkaStorageError.Code)) {
		t.Error("KAFKA_STORAGE_ERROR is not retriable")
	}
}

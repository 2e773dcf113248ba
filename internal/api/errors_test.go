package api

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/metastore"
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

// An admin request whose store write got no answer (no quorum, a store
// cut off) answers REQUEST_TIMED_OUT, which clients retry, not
// UNKNOWN_SERVER_ERROR, which they do not.
func TestErrorCodeStoreUnavailable(t *testing.T) {
	err := fmt.Errorf("metadata: create topic t: %w", fmt.Errorf("etcdstore: txn: %w (rpc error: code = Unavailable)", metastore.ErrUnavailable))
	if got := errorCode(err); got != kerr.RequestTimedOut.Code {
		t.Errorf("errorCode(%v) = %d, want %d", err, got, kerr.RequestTimedOut.Code)
	}
	if !kerr.IsRetriable(kerr.ErrorForCode(kerr.RequestTimedOut.Code)) {
		t.Error("REQUEST_TIMED_OUT is not retriable")
	}
}

// The message beside a code is what Kafka puts there, its exception's
// message: a wrapped kerr error's detail alone, not the code's name and
// description in front of it (clients print both the code and the
// message); any other error's text as it is.
func TestErrorMessage(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: Topic 'x' already exists.", kerr.TopicAlreadyExists), "Topic 'x' already exists."},
		{fmt.Errorf("api: %w", fmt.Errorf("%w: Topic already has 3 partitions.", kerr.InvalidPartitions)), "api: " + kerr.InvalidPartitions.Error() + ": Topic already has 3 partitions."},
		{kerr.NotController, kerr.NotController.Error()},
		{fmt.Errorf("storage: read: %w", syscall.EIO), "storage: read: input/output error"},
	}
	for _, c := range cases {
		if got := errorMessage(c.err); got == nil || *got != c.want {
			t.Errorf("errorMessage(%v) = %v, want %q", c.err, got, c.want)
		}
	}
	if errorMessage(nil) != nil {
		t.Error("a message for no error")
	}
}

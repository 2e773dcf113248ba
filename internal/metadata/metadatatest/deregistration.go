// Package metadatatest holds test helpers that read the store's history
// through the metadata layout.
package metadatatest

import (
	"slices"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// StatesAtDeregistration follows the store history until broker id's
// registration is deleted and returns, as of that moment, the leader of
// each partition of topic whose state was written meanwhile and whether id
// was in its ISR. It fails t after a minute.
func StatesAtDeregistration(t testing.TB, history <-chan metastore.WatchResponse, id int32, topic string) (leaders map[int32]int32, inISR map[int32]bool) {
	t.Helper()
	leaders, inISR = map[int32]int32{}, map[int32]bool{}
	deadline := time.After(60 * time.Second)
	for {
		select {
		case resp, ok := <-history:
			if !ok || resp.Err != nil {
				t.Fatalf("store history ended: %v", resp.Err)
			}
			for _, ev := range resp.Events {
				if ev.KV.Key == metadata.BrokerKey(id) && ev.Type == metastore.EventDelete {
					return leaders, inISR
				}
				name, chunk, ok := metadata.ParseTopicsKey(ev.KV.Key)
				if !ok || name != topic || chunk < 0 || ev.Type != metastore.EventPut {
					continue
				}
				es, err := metadata.DecodeStateChunk(ev.KV.Value)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range es {
					leaders[e.Partition], inISR[e.Partition] = e.State.Leader, slices.Contains(e.State.ISR, id)
				}
			}
		case <-deadline:
			t.Fatalf("broker %d never deregistered", id)
		}
	}
}

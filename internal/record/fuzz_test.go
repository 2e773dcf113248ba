package record

import (
	"testing"

	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

func FuzzValidate(f *testing.F) {
	for _, c := range []int8{recordtest.None, recordtest.Gzip, recordtest.Snappy, recordtest.SnappyXerial, recordtest.Lz4, recordtest.Zstd} {
		f.Add(recordtest.Batch(1000, c, sampleRecs()...))
	}
	f.Add(append(recordtest.Values(1, "a"), recordtest.Values(2, "b", "c")...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		hdrs, err := Validate(in, 1<<20)
		// A produced payload passes ReadProduced and CheckProduced (with
		// Kafka's default rules) exactly when it is one batch Validate
		// accepts.
		h, perr := ReadProduced(in, 1<<20)
		if perr == nil {
			_, _, _, perr = CheckProduced(in, h, noRules)
		}
		if single := err == nil && len(hdrs) == 1; single != (perr == nil) {
			t.Fatalf("Validate: %d batches, %v; ReadProduced and CheckProduced: %v", len(hdrs), err, perr)
		}
		if err != nil {
			return
		}
		pos := 0
		for _, h := range hdrs {
			batch := in[pos : pos+h.Size()]
			n := int32(0)
			if err := Records(batch, func(Record) bool { n++; return true }); err != nil {
				t.Fatalf("Validate accepted a batch Records rejects: %v", err)
			}
			if n != h.NumRecords {
				t.Fatalf("Records yielded %d of %d", n, h.NumRecords)
			}
			pos += h.Size()
		}
		if pos != len(in) {
			t.Fatalf("headers cover %d of %d bytes", pos, len(in))
		}
	})
}

package record

import "fmt"

// Validate checks one or more whole v2 batches back to back, as producers
// write them (the coordinators' own batches; a client's produced batch goes
// through ReadProduced and CheckProduced, produced.go, which apply the same
// checks and the topic's rules). Per batch, in order: plausible length and
// whole batch present (ErrCorrupt), magic 2 (ErrUnsupportedMagic), size <=
// maxBatchBytes (ErrTooLarge), CRC (ErrCorrupt), NumRecords ==
// LastOffsetDelta+1 > 0 and every record well framed with offset deltas
// 0..n-1 (ErrInvalidRecord); compressed batches are decompressed to walk
// their records. It returns the headers in order. It does not reject
// control batches; the caller checks Header.Control.
func Validate(records []byte, maxBatchBytes int) ([]Header, error) {
	if len(records) == 0 {
		return nil, fmt.Errorf("%w: empty record set", ErrCorrupt)
	}
	var hdrs []Header
	for pos := 0; pos < len(records); {
		h, err := validateBatch(records[pos:], maxBatchBytes)
		if err != nil {
			return nil, fmt.Errorf("batch at byte %d: %w", pos, err)
		}
		hdrs = append(hdrs, h)
		pos += h.Size()
	}
	return hdrs, nil
}

func validateBatch(b []byte, maxBatchBytes int) (Header, error) {
	// v0 and v1 message sets keep the magic byte at the same position.
	if len(b) > offMagic && b[offMagic] != 2 {
		return Header{}, fmt.Errorf("%w: magic %d", ErrUnsupportedMagic, int8(b[offMagic]))
	}
	h, err := ReadHeader(b)
	if err != nil {
		return h, err
	}
	if h.Size() > len(b) {
		return h, fmt.Errorf("%w: batch of %d bytes truncated to %d", ErrCorrupt, h.Size(), len(b))
	}
	if h.Size() > maxBatchBytes {
		return h, fmt.Errorf("%w: batch of %d bytes, limit %d", ErrTooLarge, h.Size(), maxBatchBytes)
	}
	batch := b[:h.Size()]
	if !CheckCRC(batch) {
		return h, fmt.Errorf("%w: CRC mismatch", ErrCorrupt)
	}
	data, err := payload(h, batch[HeaderSize:])
	if err != nil {
		return h, err
	}
	return h, walk(h, data, nil, false)
}

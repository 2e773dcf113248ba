package kafka

import "testing"

// Java's String.hashCode and Kafka's partition among 50, computed with the
// JDK (jshell: s.hashCode(), Utils.abs(h) % 50).
func TestCoordinatorPartition(t *testing.T) {
	for _, tc := range []struct {
		id        string
		hash      int32
		partition int32
	}{
		{"", 0, 0},
		{"group", 98629247, 47},
		{"my-group", -1906497762, 12},          // negative: abs before the modulo
		{"polygenelubricants", -2147483648, 0}, // Integer.MIN_VALUE: Utils.abs gives 0
		{"héllo", 103094734, 34},               // a non-ASCII code unit
		{"😀", 1772899, 49},                     // a surrogate pair: two UTF-16 units
	} {
		if got := JavaStringHash(tc.id); got != tc.hash {
			t.Errorf("hash(%q) = %d, want %d", tc.id, got, tc.hash)
		}
		if got := CoordinatorPartition(tc.id, 50); got != tc.partition {
			t.Errorf("CoordinatorPartition(%q, 50) = %d, want %d", tc.id, got, tc.partition)
		}
	}
}

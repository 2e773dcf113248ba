package kafka

import "unicode/utf16"

// CoordinatorPartition is the partition of a coordinator's internal topic
// (__consumer_offsets, __transaction_state) that holds key: Kafka's
// Utils.abs(key.hashCode) % partitions (GroupMetadataManager.partitionFor,
// TransactionStateManager.partitionFor), with Java's String.hashCode over
// UTF-16 code units and Utils.abs mapping Integer.MIN_VALUE to 0.
func CoordinatorPartition(key string, partitions int32) int32 {
	return javaAbs(JavaStringHash(key)) % partitions
}

// JavaStringHash is Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over UTF-16 code units, in int32 arithmetic.
func JavaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// javaAbs is Kafka's Utils.abs: |n|, and 0 for math.MinInt32.
func javaAbs(n int32) int32 {
	if n == -1<<31 {
		return 0
	}
	if n < 0 {
		return -n
	}
	return n
}

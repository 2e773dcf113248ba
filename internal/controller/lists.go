package controller

// int32Lists hands out replica lists (ISRs) cut from shared blocks: an
// election or ISR change computes a new ISR for each of thousands of
// partitions, and an allocation each was a good part of the cost and of
// the garbage. A block is about as large as a state chunk's decoded ISRs,
// which share one array the same way (metadata.DecodeStateChunk), so a
// block outlives its lists by no more than a chunk does. Each list is cut
// at its length, so an append copies it rather than writing into its
// neighbour; like every list the context holds, it is never modified in
// place.
//
// Evidence: BenchmarkBrokerFailure at 100k partitions allocated 183k
// times per failure, 17k with these lists and the slab-backed replica
// states of tables.go (3e3c172; ns/op not recorded).
type int32Lists struct{ block []int32 }

const listBlock = 1024

// filter is a copy of list without the members drop says, or list itself
// when drop says none.
func (l *int32Lists) filter(list []int32, drop func(int32) bool) []int32 {
	n := 0
	for _, r := range list {
		if !drop(r) {
			n++
		}
	}
	if n == len(list) {
		return list
	}
	out := l.take(n)
	for _, r := range list {
		if !drop(r) {
			out = append(out, r)
		}
	}
	return out
}

// without is list without id (list itself when id is not in it).
func (l *int32Lists) without(list []int32, id int32) []int32 {
	n := len(list)
	for _, r := range list {
		if r == id {
			n--
		}
	}
	if n == len(list) {
		return list
	}
	out := l.take(n)
	for _, r := range list {
		if r != id {
			out = append(out, r)
		}
	}
	return out
}

// take is an empty list with room for n.
func (l *int32Lists) take(n int) []int32 {
	if n > listBlock/8 {
		return make([]int32, 0, n)
	}
	if len(l.block) < n {
		l.block = make([]int32, listBlock)
	}
	out := l.block[:0:n]
	l.block = l.block[n:]
	return out
}

// keepIf is s without the items keep refuses, keep called once per item
// in order. It is s itself when keep takes every item (what a state
// machine's validation of hundreds of thousands of partitions or replicas
// nearly always does), so that nothing is copied then; it shares s's
// array otherwise too, and is only read.
func keepIf[T any](s []T, keep func(T) bool) []T {
	for i, v := range s {
		if !keep(v) {
			out := s[:i:i]
			for _, v := range s[i+1:] {
				if keep(v) {
					out = append(out, v)
				}
			}
			return out
		}
	}
	return s
}

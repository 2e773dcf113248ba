package metadata

// Fast paths for the documents written and read in bulk: partition state
// chunks (chunks.go) and topic assignments. A controller creating 100k
// partitions encodes 100k states and every standby decodes them, where
// encoding/json's reflection dominated. The decoders accept the documents
// as this package writes them (any whitespace, fields in any order); on
// anything else — an unknown or escaped key, a non-integer, a number out of
// range — they give up and the caller falls back to encoding/json, which
// stays the reference for what is valid and for the error.
//
// Evidence: the fast state codec, with parallel state writes, made topic
// creation about twice as fast (721952a; no benchmark named).
// EncodeAssignment: BenchmarkEncodeAssignment (1000 partitions, RF 3)
// 0.74-1.04 ms, 198 KB, 2914 allocs → 0.24-0.33 ms, 45 KB, 3 allocs
// (75e161e). DecodeDenseAssignment, its lists cut from shared blocks
// (int32s): BenchmarkCreateTopicsController 361k → 60k allocations, 157 →
// 141 MB; BenchmarkCreateTopicsStandby 147k → 46k, 43 → 30 MB (1095a63).
// FuzzAssignment and FuzzStateChunk (fastcodec_fuzz_test.go) hold both
// codecs to encoding/json.

import (
	"cmp"
	"encoding/base64"
	"slices"
	"strconv"
)

// maxInt32Len is the longest int32 in decimal, with a separator.
const maxInt32Len = 12

// putInt32 writes v in decimal at w[i:], which has room for it, and
// returns the index after it. Most values of state rows are a digit.
func putInt32(w []byte, i int, v int32) int {
	if uint32(v) < 10 {
		w[i] = '0' + byte(v)
		return i + 1
	}
	u := uint32(v)
	if v < 0 {
		w[i], i = '-', i+1
		u = uint32(-int64(v))
	}
	n := 1
	for x := u; x >= 10; x /= 10 {
		n++
	}
	for j := i + n - 1; j >= i; j-- {
		w[j] = '0' + byte(u%10)
		u /= 10
	}
	return i + n
}

// appendAssignment appends a's document as encoding/json writes it: the
// fields in declaration order, each replica map's keys in the order of
// their decimal strings, a nil list as null.
func appendAssignment(b []byte, a Assignment) []byte {
	b = append(b, `{"version":3,"topic_id":"`...)
	b = base64.RawURLEncoding.AppendEncode(b, a.TopicID[:])
	b = append(b, `","partitions":`...)
	b = appendReplicaMap(b, a.Partitions)
	b = append(b, `,"adding_replicas":`...)
	b = appendReplicaMap(b, a.AddingReplicas)
	b = append(b, `,"removing_replicas":`...)
	b = appendReplicaMap(b, a.RemovingReplicas)
	return append(b, '}')
}

// appendReplicaMap appends m as a JSON object keyed by partition id.
func appendReplicaMap(b []byte, m map[int32][]int32) []byte {
	type key struct {
		order uint64 // decimalKey(p)
		p     int32
	}
	keys := make([]key, 0, len(m))
	for p := range m {
		keys = append(keys, key{decimalKey(p), p})
	}
	slices.SortFunc(keys, func(x, y key) int { return cmp.Compare(x.order, y.order) })
	b = append(b, '{')
	for i, k := range keys {
		p := k.p
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(p), 10)
		b = append(b, `":`...)
		b = appendInt32List(b, m[p])
	}
	return append(b, '}')
}

// decimalKey maps v to a number that orders as v's decimal string does,
// without writing it: negative numbers ("-" sorts before every digit)
// below the others, then the digits after any sign left-aligned to ten
// places (so a prefix ties with its extensions by zeros and precedes the
// rest), then the count of digits (a prefix before its extension).
func decimalKey(v int32) uint64 {
	var k uint64
	if v >= 0 {
		k = 1 << 63
	}
	a := uint64(abs64(v))
	d := digits64(int64(a))
	return k | (a*pow10[10-d])<<4 | uint64(d)
}

var pow10 = [...]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10}

func abs64(v int32) int64 {
	if v < 0 {
		return -int64(v)
	}
	return int64(v)
}

// digits64 counts v's decimal digits (v ≥ 0).
func digits64(v int64) int {
	n := 1
	for ; v >= 10; v /= 10 {
		n++
	}
	return n
}

// appendInt32List appends l as a JSON array, null when nil.
func appendInt32List(b []byte, l []int32) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, v := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return append(b, ']')
}

// decodeAssignmentFast is DecodeAssignment for well-formed documents.
func decodeAssignmentFast(b []byte) (a Assignment, ok bool) {
	a, _, ok = decodeAssignmentWith(b, false)
	return a, ok
}

// decodeAssignmentWith reads an assignment, its partitions into
// a.Partitions or, dense, into lists indexed by partition id.
func decodeAssignmentWith(b []byte, dense bool) (a Assignment, lists [][]int32, ok bool) {
	sc := scanner{b: b}
	var seen uint8
	ok = sc.object(func(key []byte) bool {
		switch string(key) {
		case "version":
			a.Version = int(sc.int32())
			return once(&seen, 0) && sc.ok
		case "topic_id":
			s := sc.str()
			for len(s) > 0 && s[len(s)-1] == '=' {
				s = s[:len(s)-1]
			}
			if !sc.ok || base64.RawURLEncoding.DecodedLen(len(s)) != 16 {
				return false
			}
			n, err := base64.RawURLEncoding.Decode(a.TopicID[:], s)
			return err == nil && n == 16 && once(&seen, 1)
		case "partitions":
			if dense {
				lists = sc.replicaLists()
			} else {
				a.Partitions = sc.replicaMap()
			}
			return once(&seen, 2) && sc.ok
		case "adding_replicas":
			a.AddingReplicas = sc.replicaMap()
			return once(&seen, 3) && sc.ok
		case "removing_replicas":
			a.RemovingReplicas = sc.replicaMap()
			return once(&seen, 4) && sc.ok
		}
		return false
	})
	if !ok || !sc.end() {
		return Assignment{}, nil, false
	}
	for _, m := range []*map[int32][]int32{&a.Partitions, &a.AddingReplicas, &a.RemovingReplicas} {
		if *m == nil && (m != &a.Partitions || !dense) {
			*m = map[int32][]int32{}
		}
	}
	return a, lists, true
}

// scanner reads the JSON subset above; ok turns false at the first thing
// it does not handle.
type scanner struct {
	b     []byte
	i     int
	ok    bool
	block []int32 // int32s cuts its arrays from it
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// eat consumes c after whitespace.
func (s *scanner) eat(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) null() bool {
	s.ws()
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// object reads {"key": value, ...}, field calling back for each value.
func (s *scanner) object(field func(key []byte) bool) bool {
	s.ok = s.eat('{')
	if !s.ok || s.eat('}') {
		return s.ok
	}
	for {
		key := s.str()
		if !s.ok || !s.eat(':') || !field(key) {
			s.ok = false
			return false
		}
		if s.eat('}') {
			return true
		}
		if !s.eat(',') {
			s.ok = false
			return false
		}
	}
}

// once is false for a key seen before (bit i of seen): a repeated key is
// left to encoding/json, which merges some values.
func once(seen *uint8, i uint) bool {
	dup := *seen&(1<<i) != 0
	*seen |= 1 << i
	return !dup
}

// str reads a string without escapes.
func (s *scanner) str() []byte {
	if !s.eat('"') {
		s.ok = false
		return nil
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1]
		case c == '\\' || c < 0x20 || c >= 0x80:
			s.ok = false
			return nil
		}
		s.i++
	}
	s.ok = false
	return nil
}

func (s *scanner) int32() int32 {
	s.ws()
	v, i, ok := readInt32(s.b, s.i)
	s.i, s.ok = i, s.ok && ok
	return v
}

// readInt32 reads an integer at b[i:] and returns the index after it; ok
// is false for anything but a JSON integer in int32's range. It keeps
// its place in a local, not in the scanner, so that the row loop of
// readRow runs in registers.
func readInt32(b []byte, i int) (v int32, next int, ok bool) {
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	digits := i
	var u int64
	for i < len(b) && b[i]-'0' < 10 {
		if u = u*10 + int64(b[i]-'0'); u > 1<<31 {
			return 0, i, false // out of range (and no overflow below)
		}
		i++
	}
	switch n := i - digits; {
	case n == 0, n > 1 && b[digits] == '0': // not a number, or a leading zero JSON refuses
		return 0, i, false
	case neg:
		u = -u
	case u > 1<<31-1:
		return 0, i, false
	}
	return int32(u), i, true
}

// int32s reads null or an array of integers. The arrays of a document
// are cut from shared blocks (a topic of 1000 partitions has 1000 replica
// lists), each at its length, so that an append to one copies it.
func (s *scanner) int32s() []int32 {
	if s.null() {
		return nil
	}
	if !s.eat('[') {
		s.ok = false
		return nil
	}
	if len(s.block) < 16 {
		s.block = make([]int32, 1024)
	}
	out := s.block[:0]
	if s.eat(']') {
		return out[:0:0]
	}
	for s.ok {
		out = append(out, s.int32())
		if s.eat(']') {
			if len(out) <= len(s.block) && &out[0] == &s.block[0] {
				s.block = s.block[len(out):]
			}
			return out[:len(out):len(out)]
		}
		s.ok = s.ok && s.eat(',')
	}
	return nil
}

// maxDensePartition bounds the partition ids replicaLists reads: its
// slice is as long as the largest id.
const maxDensePartition = 1 << 20

// replicaLists reads null or {"<partition>": [replicas], ...} into lists
// indexed by partition id.
func (s *scanner) replicaLists() [][]int32 {
	var out [][]int32
	if s.null() {
		return out
	}
	s.object(func(key []byte) bool {
		p, err := strconv.ParseInt(string(key), 10, 32)
		if err != nil || p < 0 || p >= maxDensePartition {
			return false
		}
		for int(p) >= len(out) {
			out = append(out, nil)
		}
		if out[p] != nil {
			return false // "1" and "01": encoding/json keeps both raw keys
		}
		if out[p] = s.int32s(); out[p] == nil {
			out[p] = []int32{} // null: present, without replicas
		}
		return s.ok
	})
	return out
}

// replicaMap reads null or {"<partition>": [replicas], ...}.
func (s *scanner) replicaMap() map[int32][]int32 {
	if s.null() {
		return map[int32][]int32{}
	}
	out := map[int32][]int32{}
	s.object(func(key []byte) bool {
		p, err := strconv.ParseInt(string(key), 10, 32)
		if err != nil {
			return false
		}
		if _, dup := out[int32(p)]; dup {
			return false // "1" and "01": encoding/json keeps both raw keys
		}
		out[int32(p)] = s.int32s()
		return s.ok
	})
	return out
}

// end is true when only whitespace is left after a successful read.
func (s *scanner) end() bool {
	s.ws()
	return s.ok && s.i == len(s.b)
}

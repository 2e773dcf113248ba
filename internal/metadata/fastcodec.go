package metadata

// Fast paths for the documents written and read in bulk: partition state
// chunks (chunks.go) and topic assignments. A controller creating 100k
// partitions encodes 100k states and every standby decodes them, where
// encoding/json's reflection dominated. The decoders accept the documents
// as this package writes them (any whitespace, fields in any order); on
// anything else — an unknown or escaped key, a non-integer, a number out of
// range — they give up and the caller falls back to encoding/json, which
// stays the reference for what is valid and for the error.

import (
	"encoding/base64"
	"strconv"
)

func appendInt32s(b []byte, vs []int32) []byte {
	if vs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return append(b, ']')
}

// decodeAssignmentFast is DecodeAssignment for well-formed documents.
func decodeAssignmentFast(b []byte) (a Assignment, ok bool) {
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
			a.Partitions = sc.replicaMap()
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
		return Assignment{}, false
	}
	for _, m := range []*map[int32][]int32{&a.Partitions, &a.AddingReplicas, &a.RemovingReplicas} {
		if *m == nil {
			*m = map[int32][]int32{}
		}
	}
	return a, true
}

// scanner reads the JSON subset above; ok turns false at the first thing
// it does not handle.
type scanner struct {
	b  []byte
	i  int
	ok bool
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
	neg := false
	if s.i < len(s.b) && s.b[s.i] == '-' {
		neg = true
		s.i++
	}
	digits := s.i
	var v int64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if v = v*10 + int64(s.b[s.i]-'0'); v > 1<<31 {
			s.ok = false // out of range (and no overflow below)
			return 0
		}
		s.i++
	}
	switch n := s.i - digits; {
	case n == 0, n > 1 && s.b[digits] == '0': // not a number, or a leading zero JSON refuses
		s.ok = false
		return 0
	case neg:
		v = -v
	case v > 1<<31-1:
		s.ok = false
		return 0
	}
	return int32(v)
}

// int32s reads null or an array of integers.
func (s *scanner) int32s() []int32 {
	if s.null() {
		return nil
	}
	if !s.eat('[') {
		s.ok = false
		return nil
	}
	out := make([]int32, 0, 4)
	if s.eat(']') {
		return out
	}
	for s.ok {
		out = append(out, s.int32())
		if s.eat(']') {
			return out
		}
		s.ok = s.ok && s.eat(',')
	}
	return nil
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

package metadata

import (
	"bytes"
	"cmp"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// EncodeAssignment writes exactly what encoding/json writes, for maps of
// every shape: nil and empty, keys whose decimal order differs from their
// numeric order (negative ones too), nil and empty lists, any int32.
func TestEncodeAssignmentMatchesJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := []int32{0, 1, 9, 10, 99, 100, -1, -10, math.MaxInt32, math.MinInt32}
	randMap := func() map[int32][]int32 {
		switch rng.IntN(6) {
		case 0:
			return nil
		case 1:
			return map[int32][]int32{}
		}
		m := map[int32][]int32{}
		for range rng.IntN(40) {
			p := int32(rng.IntN(1200))
			if rng.IntN(8) == 0 {
				p = values[rng.IntN(len(values))]
			}
			var l []int32
			switch rng.IntN(5) {
			case 0: // nil
			case 1:
				l = []int32{}
			default:
				for range 1 + rng.IntN(4) {
					l = append(l, values[rng.IntN(len(values))]+int32(rng.IntN(3)))
				}
			}
			m[p] = l
		}
		return m
	}
	for trial := range 2000 {
		var a Assignment
		for i := range a.TopicID {
			a.TopicID[i] = byte(rng.IntN(256))
		}
		a.Version = rng.IntN(5) // always written as 3
		a.Partitions, a.AddingReplicas, a.RemovingReplicas = randMap(), randMap(), randMap()
		got, want := EncodeAssignment(a), encodeAssignmentJSON(a)
		if !bytes.Equal(got, want) {
			t.Fatalf("trial %d:\ngot  %s\nwant %s", trial, got, want)
		}
	}
}

// BenchmarkEncodeAssignment: a topic of 1000 partitions, RF 3, as the
// broker's CreateTopics writes it (100 per Create100k run).
func BenchmarkEncodeAssignment(b *testing.B) {
	a := Assignment{Partitions: map[int32][]int32{}}
	for p := range int32(1000) {
		a.Partitions[p] = []int32{p%3 + 1, (p+1)%3 + 1, (p+2)%3 + 1}
	}
	for _, c := range []struct {
		name string
		enc  func(Assignment) []byte
	}{{"appender", EncodeAssignment}, {"encoding-json", encodeAssignmentJSON}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				c.enc(a)
			}
		})
	}
}

// decimalKey orders numbers as their decimal strings do.
func TestDecimalKey(t *testing.T) {
	cmpDecimal := func(x, y int32) int { return cmp.Compare(decimalKey(x), decimalKey(y)) }
	rng := rand.New(rand.NewPCG(5, 6))
	edge := []int32{0, 1, 9, 10, 11, 19, 100, 101, -1, -9, -10, -100, math.MaxInt32, math.MinInt32, math.MaxInt32 / 10, math.MinInt32 / 10}
	pick := func() int32 {
		switch rng.IntN(3) {
		case 0:
			return edge[rng.IntN(len(edge))]
		case 1:
			return int32(rng.IntN(2000)) - 500
		}
		return int32(rng.Uint32())
	}
	for range 100000 {
		x, y := pick(), pick()
		want := strings.Compare(strconv.Itoa(int(x)), strconv.Itoa(int(y)))
		if got := cmpDecimal(x, y); got != want {
			t.Fatalf("cmpDecimal(%d, %d) = %d, want %d", x, y, got, want)
		}
	}
}

package server

// The error codes of the responses, as Kafka's RequestMetrics ErrorsPerSec
// (kafka.network:type=RequestMetrics,name=ErrorsPerSec,request=<API>,
// error=<ERROR>, from each response's errorCounts), served as
// samsa_request_errors_total{api, error}: every error code a response
// carries, its own and its topics', partitions', groups' and so on. NONE is
// left out: Kafka counts it too for most responses, but the structs of
// kmsg hold the fields of every version, so a NONE counted here could be
// one the response's version does not carry; samsa_requests_total counts
// the requests.
//
// The codes are found through kmsg's generated structs: every int16 field
// named ErrorCode, in the response and in the structs and slices of
// structs it holds. The walk of each response type is built once, by
// reflection, and keeps only the paths that lead to an error code.

import (
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// codeWalk adds each error code in the struct v to c.
type codeWalk func(v reflect.Value, c *codeCounts)

var codeWalks sync.Map // reflect.Type (a struct) → codeWalk (nil: no error code in it)

// walkFor returns the walk of struct type t, nil if t holds no error code.
func walkFor(t reflect.Type) codeWalk {
	if w, ok := codeWalks.Load(t); ok {
		return w.(codeWalk)
	}
	w := buildWalk(t, map[reflect.Type]bool{})
	codeWalks.Store(t, w)
	return w
}

// buildWalk builds the walk of struct type t; seen guards against a type
// that holds itself.
func buildWalk(t reflect.Type, seen map[reflect.Type]bool) codeWalk {
	if seen[t] {
		return nil
	}
	seen[t] = true
	defer delete(seen, t)
	var steps []codeWalk
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case f.Name == "ErrorCode" && f.Type.Kind() == reflect.Int16:
			steps = append(steps, func(v reflect.Value, c *codeCounts) { c.add(int16(v.Field(i).Int())) })
		case f.Type.Kind() == reflect.Struct:
			if sub := buildWalk(f.Type, seen); sub != nil {
				steps = append(steps, func(v reflect.Value, c *codeCounts) { sub(v.Field(i), c) })
			}
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			if sub := buildWalk(f.Type.Elem(), seen); sub != nil {
				steps = append(steps, func(v reflect.Value, c *codeCounts) {
					s := v.Field(i)
					for j := range s.Len() {
						sub(s.Index(j), c)
					}
				})
			}
		case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct:
			if sub := buildWalk(f.Type.Elem(), seen); sub != nil {
				steps = append(steps, func(v reflect.Value, c *codeCounts) {
					if p := v.Field(i); !p.IsNil() {
						sub(p.Elem(), c)
					}
				})
			}
		}
	}
	if len(steps) == 0 {
		return nil
	}
	return func(v reflect.Value, c *codeCounts) {
		for _, s := range steps {
			s(v, c)
		}
	}
}

// codeCount is how many times a response carries one error code.
type codeCount struct {
	code int16
	n    int
}

// codeCounts are the error codes of one response, in the order first met.
type codeCounts struct{ codes []codeCount }

func (c *codeCounts) add(code int16) {
	if code == 0 {
		return
	}
	for i := range c.codes {
		if c.codes[i].code == code {
			c.codes[i].n++
			return
		}
	}
	c.codes = append(c.codes, codeCount{code, 1})
}

var codeCountsPool = sync.Pool{New: func() any { return new(codeCounts) }}

// responseErrors calls fn with each error code other than NONE that resp
// carries and its count, in the order first met.
func responseErrors(resp kmsg.Response, fn func(code int16, n int)) {
	v := reflect.ValueOf(resp)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return
	}
	w := walkFor(v.Elem().Type())
	if w == nil {
		return
	}
	c := codeCountsPool.Get().(*codeCounts)
	w(v.Elem(), c)
	for _, cc := range c.codes {
		fn(cc.code, cc.n)
	}
	c.codes = c.codes[:0]
	codeCountsPool.Put(c)
}

// errorName is the name of code in the error label: Kafka's,
// UNKNOWN_SERVER_ERROR for a code kerr does not know.
func errorName(code int16) string {
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return kerr.UnknownServerError.Message
}

// apiErrors caches one API key's error counters by code (the codes Kafka
// defines are below 256; -1 is UNKNOWN_SERVER_ERROR).
type apiErrors [257]atomic.Pointer[prometheus.Counter]

// countErrors counts the error codes of key's response resp.
func (m *metrics) countErrors(key int16, resp kmsg.Response) {
	responseErrors(resp, func(code int16, n int) { m.errorCounter(key, code).Add(float64(n)) })
}

func (m *metrics) errorCounter(key, code int16) prometheus.Counter {
	var slot *atomic.Pointer[prometheus.Counter]
	if key >= 0 && key <= maxCachedKey && code >= -1 && code < 256 {
		byCode := m.errorsByKey[key].Load()
		if byCode == nil {
			m.errorsByKey[key].CompareAndSwap(nil, new(apiErrors))
			byCode = m.errorsByKey[key].Load()
		}
		slot = &byCode[code+1]
		if c := slot.Load(); c != nil {
			return *c
		}
	}
	c := m.errors.WithLabelValues(kmsg.NameForKey(key), errorName(code))
	if slot != nil {
		slot.Store(&c)
	}
	return c
}

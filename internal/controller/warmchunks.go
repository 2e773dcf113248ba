package controller

// Lazily decoded state chunks of the warm standby. Every state write of
// the active controller reaches every standby; a broker failure at 100k
// partitions rewrites 400 chunks, whose decoding on the standbys competed
// for the cores with the active controller and the brokers in the very
// moments the new leaders were being told. A standby therefore keeps a
// changed chunk's document as the store sent it (a later rewrite replaces
// it: one decode for both) and decodes the pending ones soon but not at
// once: the Loop hands it decodeWarm events a short while after changes
// arrive, each decoding a small slice, so that other events interleave. A
// takeover decodes whatever is still pending first, so the new controller
// starts from every state it was sent; pending chunks stay few (those of
// the last moments), which keeps a takeover as fast as an eager mirror's.
//
// Evidence: keeping every chunk undecoded until takeover saved
// cmd/samsa-failover-bench -mode crash some 20-40 ms of shared CPU at 100k
// partitions, but at 1M partitions a takeover became active after 0.3-0.9
// s instead of 6 ms (c94a6e1, which went back to eager decoding); these
// slices keep the first without the second. BenchmarkCreateTopicsStandby,
// decoding until nothing is pending: 56-74 ms/op eagerly, 64-67 ms/op
// lazily, same allocations (8d32a6a).

import (
	"time"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

const (
	// warmDecodeDelay is how long changed chunks wait before the first
	// slice is decoded.
	warmDecodeDelay = 200 * time.Millisecond
	// warmDecodeSlice is how many chunks one decodeWarm decodes (about 2
	// ms of work).
	warmDecodeSlice = 32
)

// decodeWarm asks the controller to decode a slice of the warm context's
// pending chunks.
type decodeWarm struct{}

func (decodeWarm) name() string { return "DecodeWarm" }

// rawChunk is a state chunk's document, not yet decoded.
type rawChunk struct {
	value   []byte
	version int64
}

// pendingChunks holds chunks changed and not yet decoded, in the order
// they first changed.
type pendingChunks struct {
	raw   map[chunkID]rawChunk
	order []chunkID // may hold ids since dropped
}

// put records chunk id's latest document, replacing a pending one.
func (p *pendingChunks) put(id chunkID, value []byte, version int64) {
	if p.raw == nil {
		p.raw = map[chunkID]rawChunk{}
	}
	if _, ok := p.raw[id]; !ok {
		p.order = append(p.order, id)
	}
	p.raw[id] = rawChunk{value, version}
}

func (p *pendingChunks) drop(id chunkID) { delete(p.raw, id) }

// dropTopic forgets the pending chunks of topic.
func (p *pendingChunks) dropTopic(topic string) {
	for id := range p.raw {
		if id.topic == topic {
			delete(p.raw, id)
		}
	}
}

func (p *pendingChunks) len() int { return len(p.raw) }

// version is the version of chunk id's pending document, 0 when none.
func (p *pendingChunks) version(id chunkID) int64 { return p.raw[id].version }

// take removes up to n pending chunks, n < 0 meaning all, oldest first,
// and passes each to fn.
func (p *pendingChunks) take(n int, fn func(chunkID, rawChunk)) {
	i := 0
	for ; i < len(p.order) && n != 0; i++ {
		id := p.order[i]
		if rc, ok := p.raw[id]; ok {
			delete(p.raw, id)
			fn(id, rc)
			n--
		}
	}
	p.order = p.order[i:]
	if len(p.raw) == 0 {
		p.order = nil
	}
}

// warmPending reports that the warm context holds chunks not yet decoded
// (the Loop then schedules decodeWarm).
func (c *Controller) warmPending() bool {
	return c.ctx == nil && c.warm != nil && c.warm.pending.len() > 0
}

// decodePending decodes up to n of cx's pending chunks (n < 0: all).
func (c *Controller) decodePending(cx *Context, n int) {
	cx.pending.take(n, func(id chunkID, rc rawChunk) {
		es, err := metadata.DecodeStateChunk(rc.value)
		if err != nil {
			c.cfg.Logger.Warn("bad partition states", "key", metadata.StateChunkKey(id.topic, id.chunk), "err", err)
			return
		}
		cx.replaceChunk(id, es, rc.version)
	})
}

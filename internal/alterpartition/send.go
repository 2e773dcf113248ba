package alterpartition

// One AlterPartition round trip: build the request from the queued items,
// send it to the controller over a kgo client kept per controller address
// (as the controller's own channel manager does), and hand each answered
// partition its Result.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// pinned caps the version kgo sends (it picks the highest both sides
// support, up to the request's MaxVersion).
type pinned struct {
	*kmsg.AlterPartitionRequest
	max int16
}

func (p pinned) MaxVersion() int16 { return p.max }

// send makes one attempt; false means retry after a backoff.
func (m *Manager) send(ctx context.Context, batch []*entry) bool {
	id, addr, ok := m.cfg.Controller()
	if !ok {
		m.cfg.Logger.Debug("AlterPartition: no known controller; retrying", "partitions", len(batch))
		return false
	}
	cl, err := m.clientFor(addr)
	if err != nil {
		m.cfg.Logger.Warn("AlterPartition: controller client", "controller", id, "addr", addr, "err", err)
		return false
	}
	req := m.request(batch)
	version := int16(2)
	for _, e := range batch {
		if e.item.TopicID == ([16]byte{}) {
			version = 1
			break
		}
	}
	rctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	kresp, err := cl.SeedBrokers()[0].Request(rctx, pinned{req, version})
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			m.cfg.Logger.Debug("AlterPartition: request failed; retrying", "controller", id, "addr", addr, "err", err)
		}
		return false
	}
	resp := kresp.(*kmsg.AlterPartitionResponse)
	if resp.ErrorCode != 0 {
		m.cfg.Logger.Info("AlterPartition: controller refused the request; retrying", "controller", id,
			"err", kerr.ErrorForCode(resp.ErrorCode), "broker_epoch", req.BrokerEpoch)
		return false
	}
	return m.deliver(batch, resp, req.GetVersion() >= 2)
}

func (m *Manager) request(batch []*entry) *kmsg.AlterPartitionRequest {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.BrokerID, req.BrokerEpoch = m.cfg.NodeID, -1
	if m.cfg.BrokerEpoch != nil {
		req.BrokerEpoch = m.cfg.BrokerEpoch()
	}
	byTopic := map[string]int{}
	for _, e := range batch {
		it := e.item
		i, ok := byTopic[it.TP.Topic]
		if !ok {
			t := kmsg.NewAlterPartitionRequestTopic()
			t.Topic, t.TopicID = it.TP.Topic, it.TopicID
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			byTopic[it.TP.Topic] = i
		}
		p := kmsg.NewAlterPartitionRequestTopicPartition()
		p.Partition, p.LeaderEpoch, p.PartitionEpoch, p.NewISR = it.TP.Partition, it.LeaderEpoch, it.PartitionEpoch, it.NewISR
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	return req
}

type respKey struct {
	topic     string
	id        [16]byte
	partition int32
}

// deliver answers the partitions the response covers; those it leaves out
// stay queued (false: retry after a backoff).
func (m *Manager) deliver(batch []*entry, resp *kmsg.AlterPartitionResponse, byID bool) bool {
	key := func(topic string, id [16]byte, p int32) respKey {
		if byID {
			return respKey{id: id, partition: p}
		}
		return respKey{topic: topic, partition: p}
	}
	answers := map[respKey]*kmsg.AlterPartitionResponseTopicPartition{}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		for j := range t.Partitions {
			answers[key(t.Topic, t.TopidID, t.Partitions[j].Partition)] = &t.Partitions[j]
		}
	}
	var answered []*entry
	var results []Result
	complete := true
	m.mu.Lock()
	for _, e := range batch {
		p := answers[key(e.item.TP.Topic, e.item.TopicID, e.item.TP.Partition)]
		if p == nil {
			complete = false
			m.cfg.Logger.Warn("AlterPartition: partition sent but not answered; sending again", "partition", e.item.TP)
			continue
		}
		if m.outstanding[e.item.TP] == e {
			if e.next != nil { // sent in the next request
				m.outstanding[e.item.TP], e.next = e.next, nil
			} else {
				delete(m.outstanding, e.item.TP)
			}
		}
		r := Result{ErrorCode: p.ErrorCode}
		if p.ErrorCode == 0 {
			r.Leader, r.LeaderEpoch, r.PartitionEpoch, r.ISR = p.LeaderID, p.LeaderEpoch, p.PartitionEpoch, p.ISR
		} else {
			m.cfg.Logger.Debug("AlterPartition refused", "partition", e.item.TP, "err", kerr.ErrorForCode(p.ErrorCode))
		}
		answered = append(answered, e)
		results = append(results, r)
	}
	m.mu.Unlock()
	for i, e := range answered {
		e.done(results[i])
	}
	return complete
}

// clientFor returns the client for the controller at addr, replacing the
// one for an older address.
func (m *Manager) clientFor(addr string) (*kgo.Client, error) {
	if m.client != nil && m.addr == addr {
		return m.client, nil
	}
	if m.client != nil {
		m.client.Close()
		m.client = nil
	}
	cl, err := wire.BrokerClient(addr, fmt.Sprintf("broker-%d-alter-partition", m.cfg.NodeID), m.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	m.client, m.addr = cl, addr
	return cl, nil
}

package api

// DeleteTopics (key 20), v0–v6.
//
// delete.topic.enable=false answers TOPIC_DELETION_DISABLED (INVALID_REQUEST
// below v3, which lacks that code); unknown topics UNKNOWN_TOPIC_OR_PARTITION
// (UNKNOWN_TOPIC_ID when named by id, v6). The authorization check
// (TOPIC_AUTHORIZATION_FAILED) arrives with the security work. The Admin
// implementation decides how long the answer waits (the controller issue
// makes it wait for the deletion, bounded by TimeoutMillis). Internal
// topics (__consumer_offsets) are not deletable: INVALID_TOPIC_EXCEPTION
// (Kafka's tools refuse them before asking; the broker refuses too).
// THROTTLING_QUOTA_EXCEEDED (v5+) for a topic the client's
// controller_mutation_rate refuses (quota.go).

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) deleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	if req.TimeoutMillis > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.TimeoutMillis)*time.Millisecond)
		defer cancel()
	}
	type target struct {
		name *string
		id   [16]byte
	}
	var targets []target
	if req.Version >= 6 {
		for _, t := range req.Topics {
			targets = append(targets, target{t.Topic, t.TopicID})
		}
	} else {
		for _, n := range req.TopicNames {
			targets = append(targets, target{name: &n})
		}
	}
	// Each topic is resolved, and asks the controller mutation quota for
	// its partitions, in request order; then every topic is queued at once
	// and the answer waits for all of them (Kafka's DelayedDeleteTopics),
	// not one after the other.
	mq := h.mutationQuota(ctx, req.Version, 5)
	defer mq.done()
	resp.Topics = make([]kmsg.DeleteTopicsResponseTopic, len(targets))
	names := make([]string, len(targets))
	for i, tg := range targets {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic, st.TopicID = tg.name, tg.id
		var t TopicInfo
		if t, st.ErrorCode = h.deletable(req.Version, tg.name, tg.id, &st); st.ErrorCode == 0 && !mq.allow(len(t.Partitions)) {
			st.ErrorCode, st.ErrorMessage = errorCode(errThrottlingQuota), errorMessage(errThrottlingQuota)
		}
		names[i] = t.Name
		resp.Topics[i] = st
	}
	var wg sync.WaitGroup
	for i := range targets {
		if resp.Topics[i].ErrorCode != 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &resp.Topics[i]
			if err := h.Admin.DeleteTopic(ctx, names[i]); err != nil {
				st.ErrorMessage = errorMessage(err)
				st.ErrorCode = errorCode(err)
				if ctx.Err() != nil {
					st.ErrorCode = kerr.RequestTimedOut.Code
				}
			}
		}()
	}
	wg.Wait()
	return resp
}

// deletable resolves the topic named by name or id and checks that it
// may be deleted, filling in st's name and id; an error code otherwise.
func (h *Handler) deletable(version int16, name *string, id [16]byte, st *kmsg.DeleteTopicsResponseTopic) (TopicInfo, int16) {
	if !h.Broker.DeleteTopicEnable {
		if version < 3 {
			return TopicInfo{}, kerr.InvalidRequest.Code
		}
		return TopicInfo{}, kerr.TopicDeletionDisabled.Code
	}
	var t TopicInfo
	var ok bool
	if name == nil {
		if t, ok = h.Meta.TopicByID(id); !ok {
			return t, kerr.UnknownTopicID.Code
		}
		n := t.Name
		st.Topic = &n
	} else if t, ok = h.Meta.Topic(*name); !ok {
		return t, kerr.UnknownTopicOrPartition.Code
	}
	st.TopicID = t.ID
	if t.Internal {
		msg := "internal topic " + t.Name + " cannot be deleted"
		st.ErrorMessage = &msg
		return t, kerr.InvalidTopicException.Code
	}
	return t, 0
}

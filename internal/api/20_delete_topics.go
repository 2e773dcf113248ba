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
	// Every topic is queued at once and the answer waits for all of them
	// (Kafka's DelayedDeleteTopics), not one after the other.
	resp.Topics = make([]kmsg.DeleteTopicsResponseTopic, len(targets))
	var wg sync.WaitGroup
	for i, tg := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := kmsg.NewDeleteTopicsResponseTopic()
			st.Topic, st.TopicID = tg.name, tg.id
			st.ErrorCode = h.deleteOne(ctx, req.Version, tg.name, tg.id, &st)
			resp.Topics[i] = st
		}()
	}
	wg.Wait()
	return resp
}

func (h *Handler) deleteOne(ctx context.Context, version int16, name *string, id [16]byte, st *kmsg.DeleteTopicsResponseTopic) int16 {
	if !h.Broker.DeleteTopicEnable {
		if version < 3 {
			return kerr.InvalidRequest.Code
		}
		return kerr.TopicDeletionDisabled.Code
	}
	var t TopicInfo
	var ok bool
	if name == nil {
		if t, ok = h.Meta.TopicByID(id); !ok {
			return kerr.UnknownTopicID.Code
		}
		n := t.Name
		st.Topic = &n
	} else if t, ok = h.Meta.Topic(*name); !ok {
		return kerr.UnknownTopicOrPartition.Code
	}
	st.TopicID = t.ID
	if t.Internal {
		msg := "internal topic " + t.Name + " cannot be deleted"
		st.ErrorMessage = &msg
		return kerr.InvalidTopicException.Code
	}
	if err := h.Admin.DeleteTopic(ctx, t.Name); err != nil {
		st.ErrorMessage = errorMessage(err)
		if ctx.Err() != nil {
			return kerr.RequestTimedOut.Code
		}
		return errorCode(err)
	}
	return 0
}

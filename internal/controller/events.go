package controller

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// Event is something for the controller's loop to handle.
type Event interface{ name() string }

// Startup begins campaigning with the broker's (new) session.
type Startup struct{ Session metastore.Session }

// ControllerChange: /controller was written or deleted.
type ControllerChange struct{}

// BrokerChange: /brokers/ids/ changed.
type BrokerChange struct{}

// TopicChange: topic assignments under /brokers/topics/ changed.
type TopicChange struct{ KVs []metastore.KV }

// DeleteTopics: /admin/delete_topics/ changed.
type DeleteTopics struct{}

// SessionExpired: the broker's store session ended.
type SessionExpired struct{}

// Expire makes an active controller resign (tests, shutdown).
type Expire struct{}

type response struct {
	broker int32
	req    kmsg.Request
	resp   kmsg.Response
	err    error
}

func (Startup) name() string          { return "Startup" }
func (ControllerChange) name() string { return "ControllerChange" }
func (BrokerChange) name() string     { return "BrokerChange" }
func (TopicChange) name() string      { return "TopicChange" }
func (SessionExpired) name() string   { return "SessionExpired" }
func (DeleteTopics) name() string     { return "DeleteTopics" }
func (Expire) name() string           { return "Expire" }
func (response) name() string         { return "BrokerResponse" }

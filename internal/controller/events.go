package controller

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// Event is something for the controller's loop to handle. What Kafka's
// ZooKeeper watches deliver as ControllerChange, BrokerChange, TopicChange
// and TopicDeletion events reaches the loop as store changes (storeChange,
// standby.go), which run the same handlers; the others are below and next
// to their handlers (AlterPartition, ControlledShutdown, ElectLeaders,
// AlterReassignments, ListReassignments, AutoLeaderRebalance, decodeWarm,
// gaugesEvent).
type Event interface{ name() string }

// Startup begins campaigning with the broker's (new) session.
type Startup struct{ Session metastore.Session }

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

func (Startup) name() string        { return "Startup" }
func (SessionExpired) name() string { return "SessionExpired" }
func (Expire) name() string         { return "Expire" }
func (response) name() string       { return "BrokerResponse" }

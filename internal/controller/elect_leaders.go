package controller

// Replica leader elections asked for by an admin client (ElectLeaders, KIP-183
// and KIP-460), as the ZooKeeper-era KafkaController's
// processReplicaLeaderElection and onReplicaElection.
//
// The whole request is answered NOT_CONTROLLER, partition by partition,
// when this broker is not the active controller. Otherwise each partition
// (repeats count once) is, in order:
//
//	not in any known topic            UNKNOWN_TOPIC_OR_PARTITION
//	of a topic queued for deletion    INVALID_TOPIC_EXCEPTION
//	preferred: led by its first assigned replica already
//	unclean: led by a live broker     ELECTION_NOT_NEEDED
//	preferred: the first assigned replica not live (or shutting down) or
//	not in the ISR                    PREFERRED_LEADER_NOT_AVAILABLE
//	unclean: no live replica          ELIGIBLE_LEADERS_NOT_AVAILABLE
//
// and the rest are elected together: preferred ones with the preferred
// strategy (ISR unchanged), unclean ones with the offline strategy with
// unclean election allowed whatever the topic says (the first live ISR
// member if any, else the first live replica, whose ISR becomes itself).
// The writes are the partition state machine's (batched, conditional,
// fenced); the LeaderAndIsr and UpdateMetadata requests go out in one batch.
// An elected partition answers its new leader, which the broker that took
// the request then waits to see in its metadata (Kafka's DelayedElectLeader);
// one still not electable after the write answers as above.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// ElectionType is ElectLeaders' election type.
type ElectionType int8

const (
	ElectPreferred ElectionType = 0
	ElectUnclean   ElectionType = 1
)

// String is Kafka's ElectionType name, as kafka-leader-election.sh prints.
func (t ElectionType) String() string {
	switch t {
	case ElectPreferred:
		return "PREFERRED"
	case ElectUnclean:
		return "UNCLEAN"
	}
	return fmt.Sprintf("ElectionType(%d)", int8(t))
}

// ElectionResult is one partition's outcome: Code 0 and the elected Leader,
// or an error code and message.
type ElectionResult struct {
	TP      TP
	Leader  int32
	Code    int16
	Message string
}

// ElectLeaders is an election request for the controller's loop. Reply is
// called exactly once, from the loop, with one result per distinct
// partition, sorted.
type ElectLeaders struct {
	Type       ElectionType
	Partitions []TP
	Reply      func([]ElectionResult)
}

func (ElectLeaders) name() string { return "ElectLeaders" }

// ElectLeaders hands an election to the controller and waits for the
// results: NOT_CONTROLLER at once when this broker is not the active
// controller, REQUEST_TIMED_OUT when ctx ends first (the election may still
// happen). Safe from any goroutine.
func (l *Loop) ElectLeaders(ctx context.Context, typ ElectionType, tps []TP) []ElectionResult {
	return askLoop(ctx, l, func(reply func([]ElectionResult)) Event {
		return ElectLeaders{Type: typ, Partitions: tps, Reply: reply}
	}, func(code int16) []ElectionResult { return electionErrors(tps, code, "") })
}

// electionErrors answers every distinct partition of tps with code.
func electionErrors(tps []TP, code int16, msg string) []ElectionResult {
	tps = sortedUniqueTPs(slices.Clone(tps))
	out := make([]ElectionResult, len(tps))
	for i, tp := range tps {
		out[i] = ElectionResult{TP: tp, Leader: -1, Code: code, Message: msg}
	}
	return out
}

// Kafka's messages for the errors it words itself.
const (
	msgPartitionMissing = "The partition does not exist."
	msgTopicDeleting    = "The topic is being deleted"
	msgNotNeeded        = "Leader election not needed for topic partition."
)

// onElectLeaders classifies, elects and answers one request.
func (c *Controller) onElectLeaders(ctx context.Context, e ElectLeaders) error {
	if c.ctx == nil {
		e.Reply(electionErrors(e.Partitions, kerr.NotController.Code, ""))
		return nil
	}
	if e.Type != ElectPreferred && e.Type != ElectUnclean {
		e.Reply(electionErrors(e.Partitions, kerr.InvalidRequest.Code, "unknown election type "+e.Type.String()))
		return nil
	}
	results := electionErrors(e.Partitions, 0, "")
	var electable []TP
	at := map[TP]int{}
	for i := range results {
		r := &results[i]
		if code, msg := c.checkElection(e.Type, r.TP); code != 0 {
			r.Code, r.Message = code, msg
			continue
		}
		electable = append(electable, r.TP)
		at[r.TP] = i
	}
	if len(electable) > 0 {
		c.stateChange("starting replica leader election", "type", e.Type, "partitions", len(electable), "trigger", "admin")
	}
	elected, err := c.electFor(ctx, e.Type, electable)
	for _, tp := range electable {
		r := &results[at[tp]]
		switch {
		case err != nil:
			r.Code = kerr.UnknownServerError.Code
			if errors.Is(err, metadata.ErrControllerMoved) {
				r.Code = kerr.NotController.Code
			}
		case elected[tp] >= 0:
			r.Leader = elected[tp]
		default:
			r.Code, r.Message = electionFailed(e.Type, tp)
		}
	}
	e.Reply(results)
	return err
}

// checkElection is the error a partition answers before any election, or 0
// when it is to be elected.
func (c *Controller) checkElection(typ ElectionType, tp TP) (int16, string) {
	replicas := c.ctx.replicas(tp)
	if len(replicas) == 0 {
		return kerr.UnknownTopicOrPartition.Code, msgPartitionMissing
	}
	if c.deleting[tp.Topic] {
		return kerr.InvalidTopicException.Code, msgTopicDeleting
	}
	st, hasState := c.ctx.states.get(tp)
	leader := int32(-1)
	if hasState {
		leader = st.Leader
	}
	switch typ {
	case ElectPreferred:
		if leader == replicas[0] {
			return kerr.ElectionNotNeeded.Code, msgNotNeeded
		}
		if !hasState || preferredLeader(replicas, st.ISR, c.electable) < 0 {
			return electionFailed(typ, tp)
		}
	case ElectUnclean:
		if leader >= 0 && c.ctx.isLive(leader) {
			return kerr.ElectionNotNeeded.Code, msgNotNeeded
		}
		if !slices.ContainsFunc(replicas, c.electable) {
			return electionFailed(typ, tp)
		}
	}
	return 0, ""
}

// electionFailed is Kafka's answer to a failed election of typ.
func electionFailed(typ ElectionType, tp TP) (int16, string) {
	if typ == ElectPreferred {
		return kerr.PreferredLeaderNotAvailable.Code, fmt.Sprintf(
			"Failed to elect leader for partition %s-%d under strategy PreferredReplicaPartitionLeaderElectionStrategy", tp.Topic, tp.Partition)
	}
	return kerr.EligibleLeadersNotAvailable.Code, fmt.Sprintf(
		"Failed to elect leader for partition %s-%d under strategy OfflinePartitionLeaderElectionStrategy(true)", tp.Topic, tp.Partition)
}

// electFor moves tps Online with typ's strategy in one batch and reports
// each partition's leader afterwards, -1 where the election did not reach
// its goal (preferred: the first replica leads; unclean: a live broker
// leads).
func (c *Controller) electFor(ctx context.Context, typ ElectionType, tps []TP) (map[TP]int32, error) {
	if len(tps) == 0 {
		return nil, nil
	}
	strategy := PreferredElection
	if typ == ElectUnclean {
		strategy = UncleanElection
	}
	b := newBatch()
	err := c.changePartitions(ctx, b, tps, OnlinePartition, strategy)
	c.send(b) // what was written is told even when a later write failed
	if err != nil {
		return nil, err
	}
	out := make(map[TP]int32, len(tps))
	for _, tp := range tps {
		out[tp] = -1
		st, ok := c.ctx.states.get(tp)
		if !ok || c.ctx.partState.at(tp) != OnlinePartition {
			continue
		}
		l := st.Leader
		if (typ == ElectPreferred && l == c.ctx.replicas(tp)[0]) || (typ == ElectUnclean && l >= 0 && c.ctx.isLive(l)) {
			out[tp] = l
		}
	}
	return out, nil
}

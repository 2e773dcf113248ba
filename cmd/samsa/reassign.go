package main

// samsa reassign-partitions: kafka-reassign-partitions.sh (Kafka 3.x,
// --bootstrap-server mode) over the Kafka protocol, through kadm's
// AlterPartitionAssignments and ListPartitionReassignments (KIP-455).
//
//	--execute --reassignment-json-file F [--additional]
//	    prints the current assignment of F's partitions as a rollback file,
//	    then starts the reassignments ("Successfully started partition
//	    reassignment(s) for t-0,…"); refused while other reassignments are
//	    in progress unless --additional
//	--verify --reassignment-json-file F
//	    "Reassignment of partition t-0 is completed." / "… is still in
//	    progress." / "There is no active reassignment of partition t-0, but
//	    replica set is … rather than …."
//	--cancel --reassignment-json-file F
//	    cancels those of F's partitions being reassigned
//	--generate --topics-to-move-json-file F --broker-list 0,1,2
//	    proposes Kafka's replica placement of the topics on those brokers
//	--list
//	    the reassignments in progress
//
// JSON, messages, output and exit codes follow Kafka's
// ReassignPartitionsCommand: usage errors print the message and the usage
// to stderr and exit 1; refusals print their message, other failures
// "Error: <message>", to stdout and exit 1. Throttles and log-dir moves do
// not exist in Samsa: --throttle and --preserve-throttles are accepted and
// ignored (with a warning), log_dirs other than "any" are refused, and
// --verify clears no throttles. Parsing (reassign_args.go) and formatting
// (reassign_format.go) are pure functions, tested in reassign_test.go.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// reassignTimeout bounds one command (the admin client's default.api.timeout.ms).
const reassignTimeout = 60 * time.Second

const cannotExecuteWithExisting = "Cannot execute because there is an existing partition assignment.  Use --additional to override this and create a new partition assignment in addition to the existing one. The --additional flag can also be used to change the throttle by resubmitting the current reassignment."

// terseError is printed as is (Kafka's TerseReassignmentFailureException);
// any other failure as "Error: <message>".
type terseError struct{ msg string }

func (e *terseError) Error() string { return e.msg }

func runReassign(args []string) error { return runTool(reassignMain, args) }

// reassignMain runs the command and returns its exit code.
func reassignMain(args []string, stdout, stderr io.Writer) int {
	o, err := parseReassignArgs(args)
	if code, ok := printUsageError(err, reassignUsage, stdout, stderr); ok {
		return code
	}
	if err == nil {
		for _, k := range o.ignored {
			fmt.Fprintf(stderr, "WARNING: --%s is not supported by samsa reassign-partitions and is ignored.\n", k)
		}
		ctx, cancel := context.WithTimeout(context.Background(), reassignTimeout)
		defer cancel()
		err = executeReassign(ctx, o, stdout)
	}
	var te *terseError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &te):
		fmt.Fprintln(stdout, te.msg)
	default:
		fmt.Fprintln(stdout, "Error: "+errorText(err))
	}
	return 1
}

func executeReassign(ctx context.Context, o *reassignOpts, stdout io.Writer) error {
	var file []byte
	for _, f := range []string{o.jsonFile, o.topicsFile} {
		if f != "" {
			var err error
			if file, err = os.ReadFile(f); err != nil {
				return err
			}
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(o.bootstrap, ",")...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	switch o.action {
	case "list":
		all, err := listReassignments(ctx, cl, nil, true)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, formatReassignmentList(all))
		return nil
	case "generate":
		topics, err := parseTopicsToMove(file, o.brokers)
		if err != nil {
			return err
		}
		return generateCmd(ctx, adm, topics, o, stdout)
	}
	moves, err := parseReassignmentJSON(file)
	if err != nil {
		return err
	}
	switch o.action {
	case "execute":
		return executeCmd(ctx, cl, adm, moves, o.additional, stdout)
	case "verify":
		return verifyCmd(ctx, cl, adm, moves, stdout)
	default:
		return cancelCmd(ctx, cl, adm, moves, stdout)
	}
}

func executeCmd(ctx context.Context, cl *kgo.Client, adm *kadm.Client, moves []partitionMove, additional bool, stdout io.Writer) error {
	if err := checkExecuteMoves(moves); err != nil {
		return err
	}
	ongoing, err := listReassignments(ctx, cl, nil, true)
	if err != nil {
		return err
	}
	if len(ongoing) > 0 && !additional {
		return &terseError{cannotExecuteWithExisting}
	}
	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		return err
	}
	for _, m := range moves {
		for _, r := range m.Replicas {
			if !slices.ContainsFunc(brokers, func(b kadm.BrokerDetail) bool { return b.NodeID == r }) {
				return fmt.Errorf("Unknown broker id %d", r)
			}
		}
	}
	current, err := currentReplicas(ctx, adm, moves, true)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, formatRollback(current))
	var req kadm.AlterPartitionAssignmentsReq
	for _, m := range moves {
		req.Assign(m.Topic, m.Partition, m.Replicas)
	}
	resp, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		return err
	}
	if failed := partitionErrors(resp); len(failed) > 0 {
		return &terseError{"Error reassigning partition(s):\n" + strings.Join(failed, "\n")}
	}
	fmt.Fprintln(stdout, startedLine(moves))
	return nil
}

func verifyCmd(ctx context.Context, cl *kgo.Client, adm *kadm.Client, moves []partitionMove, stdout io.Writer) error {
	ongoing, err := listReassignments(ctx, cl, moves, false)
	if err != nil {
		return err
	}
	current, err := currentReplicas(ctx, adm, moves, false)
	if err != nil {
		return err
	}
	for tp, r := range ongoing {
		current[tp] = r.Replicas
	}
	fmt.Fprintln(stdout, formatVerify(moves, current, ongoing))
	fmt.Fprintln(stdout) // no log-dir moves to report
	return nil
}

func cancelCmd(ctx context.Context, cl *kgo.Client, adm *kadm.Client, moves []partitionMove, stdout io.Writer) error {
	ongoing, err := listReassignments(ctx, cl, moves, false)
	if err != nil {
		return err
	}
	var active []string
	var req kadm.AlterPartitionAssignmentsReq
	for tp, r := range ongoing {
		if len(r.AddingReplicas) > 0 || len(r.RemovingReplicas) > 0 {
			active = append(active, tp)
			req.CancelAssign(r.Topic, r.Partition)
		}
	}
	if len(active) == 0 {
		fmt.Fprintln(stdout, "None of the specified partition reassignments are active.")
	} else {
		resp, err := adm.AlterPartitionAssignments(ctx, req)
		if err != nil {
			return err
		}
		if failed := partitionErrors(resp); len(failed) > 0 {
			return &terseError{fmt.Sprintf("Error cancelling partition reassignment%s for:\n%s", plural(len(failed)), strings.Join(failed, "\n"))}
		}
		sortTPStrings(active)
		fmt.Fprintf(stdout, "Successfully cancelled partition reassignment%s for: %s\n", plural(len(active)), strings.Join(active, ","))
	}
	fmt.Fprintln(stdout, "None of the specified partition moves are active.")
	return nil
}

func generateCmd(ctx context.Context, adm *kadm.Client, topics []string, o *reassignOpts, stdout io.Writer) error {
	details, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return err
	}
	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		return err
	}
	racks := map[int32]string{}
	for _, id := range o.brokers {
		i := slices.IndexFunc(brokers, func(b kadm.BrokerDetail) bool { return b.NodeID == id })
		if i < 0 {
			return fmt.Errorf("Unknown broker id %d", id)
		}
		if b := brokers[i]; b.Rack != nil && !o.disableRackAware {
			racks[id] = *b.Rack
		}
	}
	current, proposed := map[string][]int32{}, map[string][]int32{}
	for _, t := range topics {
		d, ok := details[t]
		if !ok || d.Err != nil {
			return &kafkaError{err: kerr.UnknownTopicOrPartition}
		}
		parts := d.Partitions.Sorted()
		if len(parts) == 0 {
			continue
		}
		for _, p := range parts {
			current[fmt.Sprintf("%s-%d", t, p.Partition)] = p.Replicas
		}
		var plan map[int32][]int32
		switch rf := len(parts[0].Replicas); {
		case len(racks) == 0:
			plan, err = metadata.AssignReplicas(o.brokers, len(parts), rf, 0, -1, -1, nil)
		case len(racks) == len(o.brokers):
			plan, err = metadata.AssignReplicasRackAware(racks, len(parts), rf, 0, -1, -1, nil)
		default:
			err = errors.New("Not all brokers have rack information for replica rack aware assignment.")
		}
		if err != nil {
			return err
		}
		for p, rs := range plan {
			proposed[fmt.Sprintf("%s-%d", t, p)] = rs
		}
	}
	fmt.Fprintf(stdout, "Current partition replica assignment\n%s\n\n", formatReassignmentJSON(current))
	fmt.Fprintf(stdout, "Proposed partition reassignment configuration\n%s\n", formatReassignmentJSON(proposed))
	return nil
}

// listReassignments lists the reassignments in progress, of every
// partition or of moves' partitions, keyed "topic-partition".
func listReassignments(ctx context.Context, cl *kgo.Client, moves []partitionMove, all bool) (map[string]kadm.ListPartitionReassignmentsResponse, error) {
	out := map[string]kadm.ListPartitionReassignmentsResponse{}
	if !all && len(moves) == 0 {
		return out, nil
	}
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = int32(reassignTimeout / time.Millisecond)
	if !all { // null Topics lists everything
		index := map[string]int{}
		for _, m := range moves {
			i, ok := index[m.Topic]
			if !ok {
				t := kmsg.NewListPartitionReassignmentsRequestTopic()
				t.Topic = m.Topic
				req.Topics = append(req.Topics, t)
				i = len(req.Topics) - 1
				index[m.Topic] = i
			}
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, m.Partition)
		}
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, &kafkaError{err: err, msg: resp.ErrorMessage}
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[fmt.Sprintf("%s-%d", t.Topic, p.Partition)] = kadm.ListPartitionReassignmentsResponse{Topic: t.Topic, Partition: p.Partition,
				Replicas: p.Replicas, AddingReplicas: p.AddingReplicas, RemovingReplicas: p.RemovingReplicas}
		}
	}
	return out, nil
}

// currentReplicas describes moves' partitions: their replica lists, keyed
// "topic-partition". A partition not found is an error when strict, else
// left out.
func currentReplicas(ctx context.Context, adm *kadm.Client, moves []partitionMove, strict bool) (map[string][]int32, error) {
	var topics []string
	for _, m := range moves {
		if !slices.Contains(topics, m.Topic) {
			topics = append(topics, m.Topic)
		}
	}
	details, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return nil, err
	}
	out := map[string][]int32{}
	for _, m := range moves {
		if p, ok := details[m.Topic].Partitions[m.Partition]; ok && details[m.Topic].Err == nil {
			out[m.tp()] = p.Replicas
		} else if strict {
			return nil, fmt.Errorf("Unable to find partition: %s", m.tp())
		}
	}
	return out, nil
}

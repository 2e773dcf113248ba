package api

// DescribeTransactions (key 65), v0: the state of transactional ids whose
// __transaction_state partition this broker leads (kafka-transactions.sh
// describe): per id NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
// TRANSACTIONAL_ID_NOT_FOUND (also for an empty id), or its state name,
// timeout, start timestamp (-1 without a transaction), producer id and
// epoch, and partitions, as Kafka's handleDescribeTransactions.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) describeTransactions(req *kmsg.DescribeTransactionsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.ProducerEpoch, st.StartTimestamp = id, -1, -1, -1
		switch {
		case h.Txns == nil:
			st.ErrorCode = kerr.CoordinatorNotAvailable.Code
		case id == "":
			st.ErrorCode = kerr.TransactionalIDNotFound.Code
		default:
			s, err := h.Txns.Describe(id)
			if st.ErrorCode = errorCode(err); err != nil {
				break
			}
			st.State, st.TimeoutMillis, st.ProducerID, st.ProducerEpoch = s.State.String(), s.TimeoutMs, s.ProducerID, s.ProducerEpoch
			if !s.Start.IsZero() {
				st.StartTimestamp = s.Start.UnixMilli()
			}
			for _, tp := range s.Partitions { // sorted by topic
				if n := len(st.Topics); n == 0 || st.Topics[n-1].Topic != tp.Topic {
					t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
					t.Topic = tp.Topic
					st.Topics = append(st.Topics, t)
				}
				t := &st.Topics[len(st.Topics)-1]
				t.Partitions = append(t.Partitions, tp.Partition)
			}
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp
}

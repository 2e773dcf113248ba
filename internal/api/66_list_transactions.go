package api

// ListTransactions (key 66), v0–v1: the transactional ids of the
// __transaction_state partitions this broker leads (kafka-transactions.sh
// list; an admin client asks every broker), filtered by state names and
// producer ids (empty: any) and, v1+ (KIP-994), by a transaction running
// at least DurationFilterMillis (-1: any). A state name Kafka does not know
// is returned in UnknownStateFilters; when every name given is unknown no
// id passes. COORDINATOR_LOAD_IN_PROGRESS while a partition is loading.

import (
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/txn"
)

func (h *Handler) listTransactions(req *kmsg.ListTransactionsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	if h.Txns == nil {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp
	}
	f := txn.Filter{ProducerIDs: req.ProducerIDFilters}
	for _, name := range req.StateFilters {
		if s, ok := txn.ParseState(name); ok {
			f.States = append(f.States, s)
		} else {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
		}
	}
	if len(req.StateFilters) > 0 && len(f.States) == 0 {
		return resp
	}
	if req.Version >= 1 && req.DurationFilterMillis > 0 {
		f.MinDuration = time.Duration(req.DurationFilterMillis) * time.Millisecond
	}
	list, err := h.Txns.List(f)
	if err != nil {
		resp.ErrorCode = errorCode(err)
		return resp
	}
	slices.SortFunc(list, func(a, b txn.Snapshot) int { return strings.Compare(a.ID, b.ID) })
	for _, s := range list {
		st := kmsg.NewListTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.TransactionState = s.ID, s.ProducerID, s.State.String()
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp
}

package api

// JoinGroup (key 11), v0–v9.
//
// The request waits until the group's join phase completes (up to the
// rebalance timeout; group.Group.Join). v0 has no rebalance timeout (the
// session timeout is used, as Kafka). From v4 a member without a member id
// and without group.instance.id gets one with MEMBER_ID_REQUIRED and must
// join again with it (KIP-394); v5+ carry group.instance.id (KIP-345); v9
// may answer SkipAssignment to a static leader rejoining a Stable group.
// The client host is the connection's address, written as Kafka does
// ("/127.0.0.1"). An empty group id is INVALID_GROUP_ID.

import (
	"context"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/group"
	"github.com/samsa-kafka/samsa/internal/server"
	"github.com/samsa-kafka/samsa/internal/wire"
)

func (h *Handler) joinGroup(ctx context.Context, c *server.Conn, hdr wire.RequestHeader, req *kmsg.JoinGroupRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.Generation = -1
	if h.Groups == nil {
		resp.ErrorCode = errorCode(errNoCoordinator)
		return resp, nil
	}
	rebalance := req.RebalanceTimeoutMillis
	if req.Version == 0 {
		rebalance = req.SessionTimeoutMillis
	}
	jr := group.JoinRequest{
		MemberID: req.MemberID, InstanceID: req.InstanceID, ClientID: clientID(hdr), ClientHost: clientHost(c),
		RebalanceTimeout:   time.Duration(rebalance) * time.Millisecond,
		SessionTimeout:     time.Duration(req.SessionTimeoutMillis) * time.Millisecond,
		ProtocolType:       req.ProtocolType,
		RequireKnownMember: req.Version >= 4 && req.InstanceID == nil,
		SupportsSkip:       req.Version >= 9,
	}
	for _, p := range req.Protocols {
		jr.Protocols = append(jr.Protocols, group.Protocol{Name: p.Name, Metadata: p.Metadata})
	}
	r := h.Groups.Join(ctx, req.Group, jr)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	resp.ErrorCode = errorCode(r.Err)
	resp.MemberID = r.MemberID
	if r.Err != nil {
		return resp, nil
	}
	resp.Generation, resp.LeaderID, resp.SkipAssignment = r.Generation, r.Leader, r.SkipAssignment
	resp.Protocol = &r.Protocol
	if req.Version >= 7 {
		resp.ProtocolType = &r.ProtocolType
	}
	for _, m := range r.Members {
		rm := kmsg.NewJoinGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ProtocolMetadata = m.MemberID, m.InstanceID, m.Metadata
		resp.Members = append(resp.Members, rm)
	}
	return resp, nil
}

func clientID(hdr wire.RequestHeader) string {
	if hdr.ClientID == nil {
		return ""
	}
	return *hdr.ClientID
}

// clientHost is the client's address as Kafka prints an InetAddress.
func clientHost(c *server.Conn) string {
	if c == nil || c.Remote == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(c.Remote.String())
	if err != nil {
		host = c.Remote.String()
	}
	return "/" + host
}

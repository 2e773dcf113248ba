package wire

import "github.com/twmb/franz-go/pkg/kmsg"

// VersionRange is the inclusive range of versions Samsa serves for one API key.
type VersionRange struct{ Min, Max int16 }

// Supported is the one table of API keys and versions this broker serves.
// ApiVersions answers from it; the request parser refuses anything outside it.
// Produce and Fetch start at the first versions that carry record batch v2
// (Kafka 4.0 dropped the older ones too).
var Supported = map[int16]VersionRange{
	int16(kmsg.Produce):          {3, 11},
	int16(kmsg.Fetch):            {4, 16},
	int16(kmsg.ListOffsets):      {1, 8},
	int16(kmsg.Metadata):         {0, 12},
	int16(kmsg.ApiVersions):      {0, 3},
	int16(kmsg.CreateTopics):     {0, 7},
	int16(kmsg.DeleteTopics):     {0, 6},
	int16(kmsg.DescribeConfigs):  {0, 4},
	int16(kmsg.DescribeCluster):  {0, 1},
	int16(kmsg.CreatePartitions): {0, 3},
	// Idempotent producers, from any broker (KIP-98, KIP-360); v2+ is
	// flexible. With a transactional id, from the id's coordinator.
	int16(kmsg.InitProducerID): {0, 5},
	// Consumer groups, classic protocol (internal/group). OffsetCommit
	// and OffsetFetch stop before v10 (topic ids).
	int16(kmsg.FindCoordinator): {0, 6},
	int16(kmsg.JoinGroup):       {0, 9},
	int16(kmsg.SyncGroup):       {0, 5},
	int16(kmsg.Heartbeat):       {0, 4},
	int16(kmsg.LeaveGroup):      {0, 5},
	int16(kmsg.OffsetCommit):    {0, 9},
	int16(kmsg.OffsetFetch):     {0, 9},
	int16(kmsg.ListGroups):      {0, 5},
	int16(kmsg.DescribeGroups):  {0, 5},
	int16(kmsg.DeleteGroups):    {0, 2},
	int16(kmsg.OffsetDelete):    {0, 0},
	// Transactional offsets on the group coordinator (KIP-98, KIP-447:
	// v3+ carry the member and generation; v5, KIP-890 part 2, is not
	// served).
	int16(kmsg.TxnOffsetCommit): {0, 4},
	// The idempotent producers of partitions this broker leads (KIP-664).
	int16(kmsg.DescribeProducers): {0, 0},
	// Admin, served by the controller (KIP-455).
	int16(kmsg.AlterPartitionAssignments):  {0, 0},
	int16(kmsg.ListPartitionReassignments): {0, 0},
	// Admin, served by the controller (KIP-183, KIP-460).
	int16(kmsg.ElectLeaders): {0, 2},

	// Clients and followers alike (KIP-101, KIP-320).
	int16(kmsg.OffsetForLeaderEpoch): {0, 4},

	// Inter-broker, from the controller (which sends LeaderAndIsr v5,
	// UpdateMetadata v8, StopReplica v3: topic ids and broker epochs; v8
	// for its Type, KIP-866: full snapshots).
	int16(kmsg.LeaderAndISR):   {5, 5},
	int16(kmsg.StopReplica):    {3, 3},
	int16(kmsg.UpdateMetadata): {8, 8},
	// Inter-broker, from partition leaders to the controller (KIP-497).
	int16(kmsg.AlterPartition): {0, 3},
	// Transaction markers, coordinator to partition leaders (api 27).
	int16(kmsg.WriteTxnMarkers): {0, 1},
	// Transactions (internal/txn; KIP-98, KIP-447, KIP-890 part 1).
	// Transaction version 1: EndTxn stops at v4; AddPartitionsToTxn v4+
	// (batched, verify-only) are the brokers' forms.
	int16(kmsg.AddPartitionsToTxn):   {0, 5},
	int16(kmsg.AddOffsetsToTxn):      {0, 4},
	int16(kmsg.EndTxn):               {0, 4},
	int16(kmsg.DescribeTransactions): {0, 0},
	int16(kmsg.ListTransactions):     {0, 1},

	// Inter-broker, from a stopping broker to the controller (v1+: the
	// usual request header; v2+ carries the broker epoch).
	int16(kmsg.ControlledShutdown): {1, 3},

	// Operating a cluster (issue 20): dynamic configs.
	int16(kmsg.AlterConfigs):            {0, 2},
	int16(kmsg.IncrementalAlterConfigs): {0, 1},

	// Operating a cluster (issue 20): log dirs and DeleteRecords.
	int16(kmsg.DeleteRecords):       {0, 2},
	int16(kmsg.DescribeLogDirs):     {0, 4},
	int16(kmsg.AlterReplicaLogDirs): {0, 2},

	// ACLs, answered as by a Kafka broker without an authorizer:
	// SECURITY_DISABLED (api/29_acls.go).
	int16(kmsg.DescribeACLs): {0, 3},
	int16(kmsg.CreateACLs):   {0, 3},
	int16(kmsg.DeleteACLs):   {0, 3},

	// SCRAM credentials: none to describe, none to set (Samsa has no SASL;
	// api/50_describe_user_scram_credentials.go).
	int16(kmsg.DescribeUserSCRAMCredentials): {0, 0},

	// Operating a cluster (issue 20): client quotas.
	int16(kmsg.DescribeClientQuotas): {0, 1},
	int16(kmsg.AlterClientQuotas):    {0, 1},

	// Operating a cluster (issue 20): features. Samsa finalizes none
	// (api/57_update_features.go).
	int16(kmsg.UpdateFeatures): {0, 2},
}

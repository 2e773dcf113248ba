package broker

// The broker's gauges an operator alerts on, under Kafka's names: what
// kafka.server:type=ReplicaManager and kafka.controller:type=KafkaController
// report, read at each scrape from the replica manager and, on the active
// controller, from the controller's loop (controller.Gauges); the bytes in
// and out of kafka.server:type=BrokerTopicMetrics over all topics and by
// topic (kafka.BrokerTopicStats); LogManager's offline log dirs, the replica
// fetchers' largest lag, the store sessions lost and whether the broker
// serves clients.

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// registerMetrics registers the broker's collector and the controller
// loop's event durations (samsa_controller_event_duration_seconds by event:
// Kafka's ControllerStats <state>RateAndTimeMs, StoreChange covering its
// BrokerChange, TopicChange, TopicDeletion, IsrChange and the other store
// notifications together).
func registerMetrics(reg prometheus.Registerer, b *Broker) error {
	if err := reg.Register(newBrokerCollector(b)); err != nil {
		return err
	}
	events := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "samsa_controller_event_duration_seconds",
		Help: "Time the controller took to handle an event of its loop, by event (Kafka's " +
			"kafka.controller:type=ControllerStats,name=<state>RateAndTimeMs; StoreChange: the store's notifications).",
		Buckets: prometheus.ExponentialBuckets(1e-5, 4, 12), // 10µs to 42s
	}, []string{"event"})
	if err := reg.Register(events); err != nil {
		return err
	}
	b.loop.ObserveEvents(func(event string, took time.Duration) { events.WithLabelValues(event).Observe(took.Seconds()) })
	return nil
}

// gaugesTimeout bounds a scrape's wait for the controller's loop: a loop
// busy that long (a failover of a million partitions) leaves the
// controller's gauges out of that scrape rather than holding it.
const gaugesTimeout = 5 * time.Second

type brokerCollector struct {
	b *Broker

	partitions, leaders, underReplicated, underMinISR, atMinISR *prometheus.Desc
	isrShrinks, isrExpands                                      *prometheus.Desc
	active, offline, imbalance, topics, allPartitions           *prometheus.Desc
	topicsToDelete, unclean                                     *prometheus.Desc
	replBytesIn, replBytesOut                                   *prometheus.Desc
	offlineDirs, maxLag, sessionEnds, ready, eventQueue         *prometheus.Desc
	allTopics, byTopic                                          []*prometheus.Desc // topicSeries' over all topics, by topic
	delayed                                                     *prometheus.Desc   // by operation
}

func newBrokerCollector(b *Broker) *brokerCollector {
	d := func(name, kafkaName, help string) *prometheus.Desc {
		return prometheus.NewDesc(name, help+" (Kafka's "+kafkaName+").", nil, nil)
	}
	const rm, kc = "kafka.server:type=ReplicaManager,name=", "kafka.controller:type=KafkaController,name="
	const bt = "kafka.server:type=BrokerTopicMetrics,name="
	c := &brokerCollector{b: b,
		partitions:      d("samsa_replica_manager_partitions", rm+"PartitionCount", "Partitions hosted on this broker"),
		leaders:         d("samsa_replica_manager_leaders", rm+"LeaderCount", "Partitions this broker leads"),
		underReplicated: d("samsa_replica_manager_under_replicated_partitions", rm+"UnderReplicatedPartitions", "Partitions this broker leads whose ISR is smaller than their replicas"),
		underMinISR:     d("samsa_replica_manager_under_min_isr_partitions", rm+"UnderMinIsrPartitionCount", "Partitions this broker leads whose ISR is smaller than min.insync.replicas: acks=all produce fails"),
		atMinISR:        d("samsa_replica_manager_at_min_isr_partitions", rm+"AtMinIsrPartitionCount", "Partitions this broker leads whose ISR is exactly min.insync.replicas"),
		isrShrinks:      d("samsa_replica_manager_isr_shrinks_total", rm+"IsrShrinksPerSec, as a counter", "ISR shrinks adopted by the partitions this broker leads"),
		isrExpands:      d("samsa_replica_manager_isr_expands_total", rm+"IsrExpandsPerSec, as a counter", "ISR expansions adopted by the partitions this broker leads"),
		active:          d("samsa_controller_active", kc+"ActiveControllerCount", "1 on the active controller, 0 elsewhere: the cluster's sum is 1"),
		offline:         d("samsa_controller_offline_partitions", kc+"OfflinePartitionsCount", "Partitions without a leader, topics being deleted left out; on the active controller only"),
		imbalance:       d("samsa_controller_preferred_replica_imbalance", kc+"PreferredReplicaImbalanceCount", "Partitions not led by their first replica, topics being deleted left out; on the active controller only"),
		topics:          d("samsa_controller_topics", kc+"GlobalTopicCount", "Topics in the cluster; on the active controller only"),
		allPartitions:   d("samsa_controller_partitions", kc+"GlobalPartitionCount", "Partitions in the cluster; on the active controller only"),
		topicsToDelete:  d("samsa_controller_topics_to_delete", kc+"TopicsToDeleteCount", "Topics queued for deletion; on the active controller only"),
		replBytesIn:     d("samsa_replication_bytes_in_total", bt+"ReplicationBytesInPerSec, as a counter", "Record bytes the followers here appended"),
		replBytesOut:    d("samsa_replication_bytes_out_total", bt+"ReplicationBytesOutPerSec, as a counter", "Record bytes of the fetch responses to followers"),
		offlineDirs:     d("samsa_log_manager_offline_log_directories", "kafka.log:type=LogManager,name=OfflineLogDirectoryCount", "Log dirs taken offline by an I/O error (the broker halts when none is left)"),
		maxLag:          d("samsa_replica_fetcher_max_lag", "kafka.server:type=ReplicaFetcherManager,name=MaxLag,clientId=Replica", "The largest lag, in offsets, of the partitions this broker follows: the leader's high watermark less this broker's log end, as of each one's last fetch answer"),
		sessionEnds:     d("samsa_store_session_expirations_total", "kafka.server:type=SessionExpireListener,name=ZooKeeperExpiresPerSec, as a counter", "Store sessions of this broker that ended (it then registers again)"),
		ready:           d("samsa_broker_ready", "kafka.server:type=KafkaServer,name=BrokerState, 3 for RUNNING", "1 while the broker serves clients: registered and caught up with the controller's metadata, 0 otherwise"),
		eventQueue:      d("samsa_controller_event_queue_size", "kafka.controller:type=ControllerEventManager,name=EventQueueSize", "Events waiting for this broker's controller loop (store changes, broker answers, admin requests)"),
		delayed: prometheus.NewDesc("samsa_purgatory_delayed_operations", "Requests waiting for their partitions: an acks=all Produce for its replicas, "+
			"a Fetch for min.bytes, a DeleteRecords for its replicas' low watermarks (Kafka's "+
			"kafka.server:type=DelayedOperationPurgatory,name=NumDelayedOperations,delayedOperation=<operation>).", []string{"operation"}, nil),
		unclean: d("samsa_controller_unclean_leader_elections_total", "kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec, as a counter", "Leaders this broker elected, as controller, from outside the ISR"),
	}
	for _, ts := range topicSeries {
		c.allTopics = append(c.allTopics, d("samsa_"+ts.name+"_total", bt+ts.kafka+", as a counter", ts.help))
		c.byTopic = append(c.byTopic, prometheus.NewDesc("samsa_topic_"+ts.name+"_total",
			ts.help+", of the topic (Kafka's "+bt+ts.kafka+",topic=<topic>, as a counter).", []string{"topic"}, nil))
	}
	return c
}

// topicSeries are the BrokerTopicMetrics counted over all topics and by
// topic (kafka.TopicStats), served as samsa_<name>_total and
// samsa_topic_<name>_total{topic=...}.
var topicSeries = []struct {
	name, kafka, help string
	v                 func(*kafka.TopicStats) *atomic.Int64
}{
	{"bytes_in", "BytesInPerSec", "Record bytes of client produce requests appended by the leaders here",
		func(t *kafka.TopicStats) *atomic.Int64 { return &t.BytesIn }},
	{"messages_in", "MessagesInPerSec", "Records of client produce requests appended by the leaders here",
		func(t *kafka.TopicStats) *atomic.Int64 { return &t.MessagesIn }},
	{"bytes_out", "BytesOutPerSec", "Record bytes of the fetch responses to consumers",
		func(t *kafka.TopicStats) *atomic.Int64 { return &t.BytesOut }},
	{"total_produce_requests", "TotalProduceRequestsPerSec", "Partitions of produce requests to partitions hosted here",
		func(t *kafka.TopicStats) *atomic.Int64 { return &t.TotalProduce }},
	{"failed_produce_requests", "FailedProduceRequestsPerSec",
		"Partitions of produce requests to partitions hosted here answered with an error other than UNKNOWN_TOPIC_OR_PARTITION, " +
			"NOT_LEADER_OR_FOLLOWER, MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, CORRUPT_MESSAGE, KAFKA_STORAGE_ERROR",
		func(t *kafka.TopicStats) *atomic.Int64 { return &t.FailedProduce }},
	{"total_fetch_requests", "TotalFetchRequestsPerSec", "Partitions hosted here read for fetch responses to consumers and followers",
		func(t *kafka.TopicStats) *atomic.Int64 { return &t.TotalFetch }},
	{"failed_fetch_requests", "FailedFetchRequestsPerSec",
		"Partitions hosted here read for fetch responses and answered with an error other than UNKNOWN_TOPIC_OR_PARTITION, " +
			"NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH, FENCED_LEADER_EPOCH, REPLICA_NOT_AVAILABLE, KAFKA_STORAGE_ERROR, OFFSET_OUT_OF_RANGE",
		func(t *kafka.TopicStats) *atomic.Int64 { return &t.FailedFetch }},
}

func (c *brokerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.partitions, c.leaders, c.underReplicated, c.underMinISR, c.atMinISR,
		c.isrShrinks, c.isrExpands, c.active, c.offline, c.imbalance, c.topics, c.allPartitions, c.topicsToDelete, c.unclean,
		c.replBytesIn, c.replBytesOut, c.offlineDirs, c.maxLag, c.sessionEnds, c.ready, c.eventQueue, c.delayed} {
		ch <- d
	}
	for i := range topicSeries {
		ch <- c.allTopics[i]
		ch <- c.byTopic[i]
	}
}

func (c *brokerCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v int) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	counter := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	rg := c.b.replicas.Gauges()
	gauge(c.partitions, rg.Partitions)
	gauge(c.leaders, rg.Leaders)
	gauge(c.underReplicated, rg.UnderReplicated)
	gauge(c.underMinISR, rg.UnderMinISR)
	gauge(c.atMinISR, rg.AtMinISR)
	shrinks, expands := c.b.replicas.ISRChanges()
	counter(c.isrShrinks, shrinks)
	counter(c.isrExpands, expands)
	counter(c.unclean, c.b.ctrl.UncleanElections())
	st := &c.b.stats
	for i, ts := range topicSeries {
		counter(c.allTopics[i], ts.v(&st.TopicStats).Load())
	}
	counter(c.replBytesIn, st.ReplicationBytesIn.Load())
	counter(c.replBytesOut, st.ReplicationBytesOut.Load())
	st.EachTopic(func(topic string, t *kafka.TopicStats) {
		for i, ts := range topicSeries {
			ch <- prometheus.MustNewConstMetric(c.byTopic[i], prometheus.CounterValue, float64(ts.v(t).Load()), topic)
		}
	})
	pg := &c.b.purgatory
	for op, n := range map[string]int64{"Produce": pg.Produce.Load(), "Fetch": pg.Fetch.Load(), "DeleteRecords": pg.DeleteRecords.Load()} {
		ch <- prometheus.MustNewConstMetric(c.delayed, prometheus.GaugeValue, float64(n), op)
	}
	gauge(c.offlineDirs, len(c.b.logs.Dirs())-len(c.b.logs.OnlineDirs()))
	gauge(c.maxLag, int(c.b.fetchers.MaxLag()))
	counter(c.sessionEnds, c.b.sessionEnds.Load())
	ready := 0
	if c.b.cache.IsReady() {
		ready = 1
	}
	gauge(c.ready, ready)
	ctx, cancel := context.WithTimeout(context.Background(), gaugesTimeout)
	defer cancel()
	active := 0
	if c.b.ctrl.IsActive() {
		active = 1
	}
	gauge(c.active, active)
	gauge(c.eventQueue, c.b.loop.QueueLen())
	cg, ok := c.b.loop.Gauges(ctx)
	if !ok {
		return
	}
	gauge(c.offline, cg.OfflinePartitions)
	gauge(c.imbalance, cg.PreferredReplicaImbalance)
	gauge(c.topics, cg.Topics)
	gauge(c.allPartitions, cg.Partitions)
	gauge(c.topicsToDelete, cg.TopicsToDelete)
}

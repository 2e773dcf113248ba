"""kafka-python (Debian's python3-kafka) against Samsa, as an application
uses it: create a topic, produce acks=all with gzip, consume it through a
consumer group from the earliest offset and commit, leave the group, read
the committed offsets and the group's state back, delete the topic.

Prints "read PARTITION OFFSET VALUE" per record consumed, "committed
PARTITION OFFSET" per partition, "group STATE MEMBERS" and "acls ERROR"
(describing ACLs); the Go test
(clients_test.go) checks them. Exits non-zero on any client error."""
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import (ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, NewTopic,
                         ResourcePatternFilter, ResourceType)
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

bootstrap, topic, group, n = sys.argv[1].split(","), sys.argv[2], sys.argv[3], int(sys.argv[4])
deadline = time.time() + 60

admin = KafkaAdminClient(bootstrap_servers=bootstrap)
admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=3)])

producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", compression_type="gzip", linger_ms=5)
futures = [producer.send(topic, key=b"k%d" % (i % 10), value=b"kafka-python-%d" % i) for i in range(n)]
producer.flush(60)
for f in futures:
    f.get(60)
producer.close()

consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                         enable_auto_commit=False)
last = {}
read = 0
while read < n:
    if time.time() > deadline:
        sys.exit("read %d of %d records within 60 s" % (read, n))
    for tp, msgs in consumer.poll(timeout_ms=1000).items():
        for m in msgs:
            print("read %d %d %s" % (m.partition, m.offset, m.value.decode()))
            last[m.partition] = m.offset
            read += 1
consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(o + 1, "") for p, o in last.items()})
consumer.close()

for tp, om in sorted(admin.list_consumer_group_offsets(group).items()):
    if tp.topic == topic:
        print("committed %d %d" % (tp.partition, om.offset))
g = admin.describe_consumer_groups([group])[0]
print("group %s %d" % (g.state, len(g.members)))
try:
    admin.describe_acls(ACLFilter(principal=None, host="*", operation=ACLOperation.ANY,
                                  permission_type=ACLPermissionType.ANY,
                                  resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)))
    print("acls none")
except KafkaError as e:
    print("acls %s" % type(e).message)
admin.delete_topics([topic])
admin.close()

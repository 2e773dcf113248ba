"""librdkafka (confluent-kafka) transactions against Samsa: commit 200
records in two transactions, abort 100 in between, then read the topic as a
read_committed consumer up to the end of every partition and print each
value read, one per line. Exits non-zero on any client error."""
import sys

import confluent_kafka as ck

bootstrap, topic, parts = sys.argv[1], sys.argv[2], int(sys.argv[3])

p = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": "rdkafka-txn",
                 "transaction.timeout.ms": 30000})
p.init_transactions(60)


def txn(prefix, first, last, commit):
    p.begin_transaction()
    for i in range(first, last):
        p.produce(topic, value=b"%s-%d" % (prefix, i), partition=i % parts)
    if commit:
        p.commit_transaction(60)
    else:
        p.flush(60)
        p.abort_transaction(60)


txn(b"commit", 0, 100, True)
txn(b"abort", 0, 100, False)
txn(b"commit", 100, 200, True)

c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "rdkafka-reader",
                 "isolation.level": "read_committed", "enable.partition.eof": True,
                 "enable.auto.commit": False})
c.assign([ck.TopicPartition(topic, i, ck.OFFSET_BEGINNING) for i in range(parts)])
eof = set()
while len(eof) < parts:
    m = c.poll(60)
    if m is None:
        sys.exit("no message or end of partition within 60 s")
    if m.error():
        if m.error().code() == ck.KafkaError._PARTITION_EOF:
            eof.add(m.partition())
            continue
        sys.exit("consume: %s" % m.error())
    print(m.value().decode())
c.close()

// kafkajs against Samsa, as an application uses it: create a topic,
// produce idempotently (acks=all, gzip), commit one transaction and abort
// another, consume the topic through a consumer group (read_committed,
// kafkajs's default) from the earliest offset and commit, leave the group,
// read the committed offsets and the group's state back, delete the topic.
//
// Prints "read PARTITION OFFSET VALUE" per record consumed, "committed
// PARTITION OFFSET" per partition, "group STATE MEMBERS" and "acls ERROR"
// (describing ACLs); the Go test
// (clients_test.go) checks them. Exits non-zero on any client error.
const {
  Kafka, logLevel, CompressionTypes, Partitioners,
  AclResourceTypes, ResourcePatternTypes, AclOperationTypes, AclPermissionTypes
} = require('kafkajs')

const [bootstrap, topic, group, txnID, nArg] = process.argv.slice(2)
const n = Number(nArg)
const kafka = new Kafka({ clientId: 'samsa-e2e-kafkajs', brokers: bootstrap.split(','), logLevel: logLevel.ERROR })

async function main () {
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 3 }], waitForLeaders: true })

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner })
  await producer.connect()
  for (let b = 0; b < n; b += 100) {
    const messages = []
    for (let i = b; i < Math.min(b + 100, n); i++) messages.push({ key: 'k' + (i % 10), value: 'kafkajs-' + i })
    await producer.send({ topic, acks: -1, compression: CompressionTypes.GZIP, messages })
  }
  await producer.disconnect()

  const tp = kafka.producer({ transactionalId: txnID, idempotent: true, maxInFlightRequests: 1 })
  await tp.connect()
  for (const [value, commit] of [['txn-commit', true], ['txn-abort', false]]) {
    const txn = await tp.transaction()
    await txn.send({ topic, acks: -1, messages: [{ value }] })
    await (commit ? txn.commit() : txn.abort())
  }
  await tp.disconnect()

  const consumer = kafka.consumer({ groupId: group })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  const last = {}
  let read = 0
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${read} of ${n + 1} records within 60 s`)), 60000)
    consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        console.log(`read ${partition} ${message.offset} ${message.value.toString()}`)
        last[partition] = BigInt(message.offset)
        if (++read === n + 1) { clearTimeout(timer); resolve() }
      }
    }).catch(reject)
  })
  await consumer.commitOffsets(Object.entries(last).map(([p, o]) => ({ topic, partition: Number(p), offset: String(o + 1n) })))
  await consumer.disconnect()

  for (const t of await admin.fetchOffsets({ groupId: group, topics: [topic] })) {
    for (const p of t.partitions) console.log(`committed ${p.partition} ${p.offset}`)
  }
  const g = (await admin.describeGroups([group])).groups[0]
  console.log(`group ${g.state} ${g.members.length}`)
  try {
    await admin.describeAcls({ resourceType: AclResourceTypes.ANY, resourcePatternType: ResourcePatternTypes.ANY,
      operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY })
    console.log('acls none')
  } catch (e) {
    console.log(`acls ${e.type}`)
  }
  await admin.deleteTopics({ topics: [topic] })
  await admin.disconnect()
}

main().then(() => process.exit(0), (err) => { console.error(err); process.exit(1) })

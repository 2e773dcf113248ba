// Package channel is the controller's channel manager (Kafka's
// ControllerChannelManager): the controller.Sender that delivers
// LeaderAndIsr, UpdateMetadata and StopReplica requests to brokers over
// one wire.Conn each, to each broker's endpoint on control.plane.listener.name
// (else inter.broker.listener.name), and hands each answer to its request's
// callback. The
// controller core never sees a socket; the broker wires a Manager in.
//
// Invariants: a broker's requests are written in the order they were
// sent, at most maxInFlight unanswered; answers are read in that order; a
// request is sent again, in order, on a new connection until it is
// answered or its broker is removed, and a removed broker's requests are
// dropped without a callback.
//
// Goroutines: per broker, one that dials and writes (run, serve) and, per
// connection, one that reads the answers and runs the callbacks
// (readAnswers); RemoveBroker and Close wait for them.
package channel

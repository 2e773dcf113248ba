package quota

import "context"

// Kafka's request_percentage counts the time a request handler thread
// spends on a request. A request parked in a purgatory — a long-poll
// Fetch, an acks=-1 Produce or coordinator write waiting for the ISR, a
// JoinGroup waiting for the rebalance, a CreateTopics waiting for its
// leaders — holds no thread, so its wait costs the client nothing. Samsa
// serves a request on one goroutine that blocks instead; the code that
// blocks, in whatever package, marks the wait with Parked, and the
// request's accounting (internal/api) takes the marked time off.

type parkKey struct{}

// WithPark returns ctx carrying park, which Parked calls: it notes the
// start of a wait and returns the function that notes its end.
func WithPark(ctx context.Context, park func() (resume func())) context.Context {
	return context.WithValue(ctx, parkKey{}, park)
}

// Parked notes that the request ctx belongs to starts waiting on something
// else; call the returned function when the wait ends. Without
// accounting on ctx it does nothing.
func Parked(ctx context.Context) (resume func()) {
	if park, ok := ctx.Value(parkKey{}).(func() func()); ok {
		return park()
	}
	return func() {}
}

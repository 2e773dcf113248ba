package controller

// The periodic leader imbalance check (auto.leader.rebalance.enable): while
// the loop runs, a timer enqueues AutoLeaderRebalance every
// leader.imbalance.check.interval.seconds, and the active controller runs
// planRebalance (auto_rebalance.go) and elects the partitions it returns
// with the preferred strategy, in one batch, as Kafka's
// processAutoPreferredReplicaLeaderElection does. Inactive controllers
// ignore the event. Kafka's first check comes 5 s after a failover; here the
// timer just ticks, so a new controller checks within one interval.

import (
	"context"
	"sync"
	"time"
)

// AutoLeaderRebalance: time for the leader imbalance check.
type AutoLeaderRebalance struct{}

func (AutoLeaderRebalance) name() string { return "AutoLeaderRebalance" }

// onAutoLeaderRebalance checks the imbalance and elects preferred leaders.
func (c *Controller) onAutoLeaderRebalance(ctx context.Context) error {
	if c.ctx == nil {
		return nil
	}
	// Any reassignment in progress holds the elections back, as Kafka's
	// partitionsBeingReassigned.isEmpty check does.
	reassigning := len(c.ctx.reassigningPartitions()) > 0
	brokers, elect := planRebalance(c.leaderships(), c.electable, c.cfg.LeaderImbalancePercentage, reassigning)
	for _, b := range brokers {
		if b.NotLed > 0 {
			c.cfg.Logger.Debug("leader imbalance", "broker", b.Broker, "ratio", b.Ratio(),
				"not_led", b.NotLed, "preferred", b.Preferred, "over", b.Over)
		}
	}
	if len(elect) == 0 {
		return nil
	}
	c.cfg.Logger.Info("automatic preferred replica leader election", "partitions", len(elect))
	c.stateChange("starting replica leader election", "type", ElectPreferred, "partitions", len(elect), "trigger", "auto")
	elected, err := c.electFor(ctx, ElectPreferred, elect)
	if err != nil {
		return err
	}
	for _, tp := range elect {
		if elected[tp] < 0 {
			c.cfg.Logger.Warn("automatic preferred replica leader election failed", "partition", tp)
		}
	}
	return nil
}

// rebalanceTimer enqueues AutoLeaderRebalance every check interval while
// ctx lasts, when the check is enabled.
func (l *Loop) rebalanceTimer(ctx context.Context, wg *sync.WaitGroup) {
	cfg := l.c.cfg
	if !cfg.AutoLeaderRebalance || cfg.LeaderImbalanceCheckInterval <= 0 {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(cfg.LeaderImbalanceCheckInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if l.c.IsActive() {
					l.Enqueue(AutoLeaderRebalance{})
				}
			}
		}
	}()
}

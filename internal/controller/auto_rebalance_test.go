package controller

import (
	"fmt"
	"slices"
	"testing"
)

// planRebalance's decision table: who counts, who is over the limit, and
// which partitions are elected.
func TestPlanRebalance(t *testing.T) {
	all := func(int32) bool { return true }
	cases := []struct {
		name        string
		parts       []leadership
		live        func(int32) bool
		pct         int32
		reassigning bool
		figures     string // per broker: "id:notLed/preferred+" (+ over the limit)
		elect       []TP
	}{
		{name: "balanced", pct: 10, live: all,
			parts:   []leadership{ledBy("t", 0, []int32{1, 2}, 1, 1, 2), ledBy("t", 1, []int32{2, 1}, 2, 2, 1)},
			figures: "1:0/1 2:0/1"},
		{name: "one of one moved away", pct: 10, live: all,
			parts:   []leadership{ledBy("t", 0, []int32{1, 2}, 1, 1, 2), ledBy("t", 1, []int32{2, 1}, 1, 1, 2)},
			figures: "1:0/1 2:1/1+", elect: []TP{{Topic: "t", Partition: 1}}},
		{name: "ratio equal to the limit is not over it", pct: 50, live: all,
			parts:   []leadership{ledBy("t", 0, []int32{2, 1}, 2, 2, 1), ledBy("t", 1, []int32{2, 1}, 1, 1, 2)},
			figures: "2:1/2"},
		{name: "ratio just above the limit", pct: 49, live: all,
			parts:   []leadership{ledBy("t", 0, []int32{2, 1}, 2, 2, 1), ledBy("t", 1, []int32{2, 1}, 1, 1, 2)},
			figures: "2:1/2+", elect: []TP{{Topic: "t", Partition: 1}}},
		{name: "10% of 20 is not over, 3 of 20 is", pct: 10, live: all,
			parts:   twentyEach(),
			figures: "1:3/20+ 2:2/20",
			elect:   []TP{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "a", Partition: 2}}},
		{name: "preferred replica not in the ISR is not elected", pct: 10, live: all,
			parts:   []leadership{ledBy("t", 0, []int32{2, 1}, 1, 1), ledBy("t", 1, []int32{2, 1}, 1, 1, 2)},
			figures: "2:2/2+", elect: []TP{{Topic: "t", Partition: 1}}},
		{name: "preferred replica dead or shutting down", pct: 10, live: func(id int32) bool { return id != 2 },
			parts:   []leadership{ledBy("t", 0, []int32{2, 1}, 1, 1, 2)},
			figures: "2:1/1+"},
		{name: "no leader counts as not led", pct: 10, live: all,
			parts:   []leadership{ledBy("t", 0, []int32{2, 1}, -1, 2)},
			figures: "2:1/1+", elect: []TP{{Topic: "t", Partition: 0}}},
		{name: "no state counts in the group only", pct: 10, live: all,
			parts:   []leadership{{TP: TP{Topic: "t", Partition: 0}, Replicas: []int32{2, 1}, Leader: -1}, ledBy("t", 1, []int32{2, 1}, 2, 2)},
			figures: "2:0/2"},
		{name: "topics being deleted are left out", pct: 10, live: all,
			parts: []leadership{
				{TP: TP{Topic: "d", Partition: 0}, Replicas: []int32{2, 1}, HasState: true, Leader: 1, ISR: []int32{1, 2}, Deleting: true},
				ledBy("t", 0, []int32{2, 1}, 2, 2, 1)},
			figures: "2:0/1"},
		{name: "reassignments in progress hold elections back", pct: 10, live: all, reassigning: true,
			parts:   []leadership{ledBy("t", 0, []int32{2, 1}, 1, 1, 2)},
			figures: "2:1/1+"},
		{name: "several brokers over the limit", pct: 0, live: all,
			parts: []leadership{
				ledBy("t", 0, []int32{3, 1, 2}, 1, 1, 2, 3), ledBy("t", 1, []int32{2, 3, 1}, 3, 3, 1, 2),
				ledBy("t", 2, []int32{1, 2, 3}, 1, 1, 2, 3)},
			figures: "1:0/1 2:1/1+ 3:1/1+", elect: []TP{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			brokers, elect := planRebalance(c.parts, c.live, c.pct, c.reassigning)
			var figures []string
			for _, b := range brokers {
				f := fmt.Sprintf("%d:%d/%d", b.Broker, b.NotLed, b.Preferred)
				if b.Over {
					f += "+"
				}
				figures = append(figures, f)
			}
			if got := fmt.Sprint(figures); got != "["+c.figures+"]" {
				t.Errorf("figures %s, want [%s]", got, c.figures)
			}
			if !slices.Equal(elect, c.elect) {
				t.Errorf("elect %v, want %v", elect, c.elect)
			}
		})
	}
}

// ledBy is a partition with a state: its replicas, leader and ISR.
func ledBy(topic string, p int32, replicas []int32, leader int32, isr ...int32) leadership {
	return leadership{TP: TP{Topic: topic, Partition: p}, Replicas: replicas, HasState: true, Leader: leader, ISR: isr}
}

// twentyEach is two topics of 20 partitions, a preferring broker 1 and b
// broker 2; broker 2 leads 3 of a's, broker 1 2 of b's.
func twentyEach() []leadership {
	var out []leadership
	for p := range int32(20) {
		leader := int32(1)
		if p < 3 {
			leader = 2
		}
		out = append(out, ledBy("a", p, []int32{1, 2}, leader, 1, 2))
	}
	for p := range int32(20) {
		leader := int32(2)
		if p < 2 {
			leader = 1
		}
		out = append(out, ledBy("b", p, []int32{2, 1}, leader, 1, 2))
	}
	return out
}

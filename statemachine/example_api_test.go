package statemachine_test

import (
	"fmt"

	"github.com/openmrc/mrc/statemachine"
)

// Two CQs share one completion channel: their CQ events come out in the
// order they were raised, each naming its CQ (CTL-CQ-5).
func ExampleCompChannel() {
	ch := statemachine.NewCompChannel()
	var a, b statemachine.CQNotify
	_ = ch.Attach(1, &a)
	_ = ch.Attach(2, &b)
	a.ReqNotify(false)
	b.ReqNotify(false)
	ch.Offer(2, statemachine.Completion{QPN: 2})
	ch.Offer(1, statemachine.Completion{QPN: 1})
	for {
		cq, err := ch.Get()
		if err != nil {
			break
		}
		fmt.Println("CQ event for CQ", cq)
	}
	fmt.Println("destroy with CQs on it:", ch.Destroy())
	// Output:
	// CQ event for CQ 2
	// CQ event for CQ 1
	// destroy with CQs on it: statemachine: control: EBUSY: 2 CQs still on the channel
}

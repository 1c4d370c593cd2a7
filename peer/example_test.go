package peer_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/peer"
	"github.com/openmrc/mrc/statemachine"
)

// An Agent is the reference device under test: a tester (or any control
// client) drives it over the control protocol, here in process through
// control.Local; frames it sends wait in TakeTx for the transport.
func Example() {
	a, err := peer.New(peer.Config{MACs: [][6]byte{{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}},
		IP: netip.MustParseAddr("10.0.0.2")})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := control.NewClient(control.Local{H: a.Handler(func() statemachine.Time { return 0 })})
	ctx := context.Background()
	h, err := c.Hello(ctx, "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	var q control.QPNResult
	err = c.Call(ctx, control.MethodCreateQP, control.CreateQPParams{MaxSendWR: 64, MaxRecvWR: 64}, &q)
	fmt.Println(len(h.Ports), h.Ports[1].MAC, h.Ports[1].IP, err, q.QPN != 0, len(a.TakeTx(nil)))
	// Output: 2 02:00:00:00:00:02 10.0.0.2 <nil> true 0
}

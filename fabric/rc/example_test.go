package rc_test

import (
	"fmt"
	"net/netip"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/fabric/rc"
	sm "github.com/openmrc/mrc/statemachine"
)

// An RC QP pair over the fabric: one lost packet costs a go-back-N of the
// whole window behind it.
func ExampleNew() {
	s, _ := fabric.New(fabric.Config{})
	ip := func(n byte) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, 0, n}) }
	a, _ := rc.New(rc.Config{QPN: 0x11, DestQPN: 0x22, EV: 0x42, Plane: 0, SrcIP: ip(1), DstIP: ip(2)})
	b, _ := rc.New(rc.Config{QPN: 0x22, DestQPN: 0x11, EV: 0x42, Plane: 0, SrcIP: ip(2), DstIP: ip(1)})
	ia, _ := s.Attach(0, 0x11, 1, a)
	_, _ = s.Attach(1, 0x22, 0, b)
	lose := fabric.NewRule()
	lose.Src, lose.MatchPSN, lose.PSN, lose.Drop, lose.Limit = 0, true, 10, 1, 1
	_, _ = s.AddRule(lose)
	s.Input(ia, func(now sm.Time, out *sm.Output) {
		_ = a.Post(now, sm.WorkRequest{WRID: 1, Opcode: sm.OpWrite, RemoteVA: 0x1000, RKey: 1, Data: make([]byte, 64*4096)}, out)
	})
	s.Run(sm.Millisecond)
	fmt.Printf("failed=%v go-back-N events=%d packets sent again=%d\n", a.Failed(), a.GoBackNs, a.Retransmitted)
	// Output:
	// failed=false go-back-N events=1 packets sent again=54
}

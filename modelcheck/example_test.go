package modelcheck_test

import (
	"fmt"

	"github.com/openmrc/mrc/modelcheck"
	sm "github.com/openmrc/mrc/statemachine"
)

// Check a configuration in which the requester retransmits a trimmed
// packet on the EV the NACK named (a seeded bug): the checker prints the
// shortest counterexample.
func Example() {
	cfg := modelcheck.Config{
		Name:   "reuse-nacked-ev",
		Planes: 1, EVsPerPlane: 2, // EVs 0x100 and 0x101
		Msgs:      [2][]modelcheck.Msg{{{Packets: 2}}}, // A writes 2 packets to B
		MPR:       2,
		LinearCnt: 2, MaxWIMM: 1, MaxWIMMDest: 1, MinActive: 1, ProbeSuccesses: 1,
		SilentTimeouts: true,
		Faults:         sm.FaultReuseNACKedEV,
		Bounds:         modelcheck.Bounds{Trims: 1, Timers: 1},
	}
	r, err := modelcheck.Check(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(r.Violation)
	// Output:
	// invariant NACKedEVNotReused violated after 4 steps:
	//   1. t=0us    post A WR 1: WRITE of 2 packet(s), PSNs 0-1
	//        A sends A>B WRITE_FIRST psn=0 msn=0 ev=0x101
	//        A sends A>B WRITE_LAST psn=1 msn=0 ev=0x100
	//   2. t=0us    trim A>B WRITE_FIRST psn=0 msn=0 ev=0x101
	//   3. t=0us    deliver A>B WRITE_FIRST psn=0 msn=0 ev=0x101 TRIMMED
	//        B sends B>A NACK TRIMMED psn=0 ev=0x101
	//   4. t=0us    deliver B>A NACK TRIMMED psn=0 ev=0x101
	//        A EV 0x101 GOOD->SKIP (TRIMMED)
	//        A queues psn=0 for retransmission
	//        A retry 1
	//        A sends A>B WRITE_FIRST psn=0 msn=0 rtx ev=0x101
	//   => NACKedEVNotReused: A retransmits psn 0 on EV 0x101, the EV the NACK or timeout named
	//   => SentOnGoodEV: A sends psn 0 on EV 0x101, which is SKIP (plane 0 down=false)
}

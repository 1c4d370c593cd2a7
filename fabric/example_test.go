package fabric_test

import (
	"fmt"
	"net/netip"

	"github.com/openmrc/mrc/fabric"
	sm "github.com/openmrc/mrc/statemachine"
)

// Two MRC QPs on an 8-plane fabric: node 0 writes 1 MiB with immediate
// data into node 1, sprayed over 128 EVs, and the fabric delivers the
// completions.
func ExampleSim() {
	s, err := fabric.New(fabric.Config{Seed: 1})
	if err != nil {
		panic(err)
	}
	qp := func(qpn, dest uint32, src, dst byte) *sm.QP {
		c := sm.DefaultQPConfig(qpn, uint64(qpn))
		c.Addr.SrcIP, c.Addr.DstIP = netip.AddrFrom4([4]byte{10, 0, 0, src}), netip.AddrFrom4([4]byte{10, 0, 0, dst})
		q, err := sm.New(sm.DefaultConfig(uint64(qpn)), c)
		if err != nil {
			panic(err)
		}
		var out sm.Output
		err = q.BringUp(0, sm.Attr{EVProfileID: 1, CCProfileID: 1, MPR: 8, MPRDest: 8, MaxWIMM: 16, MaxWIMMDest: 16,
			Timeout: 6, Retry: sm.Retry{LinearCnt: 7, ExpCnt: sm.RetryInfinite}, PathMTU: 4096, DestQPN: dest}, &out)
		if err != nil {
			panic(err)
		}
		return q
	}
	a, b := qp(0x11, 0x22, 1, 2), qp(0x22, 0x11, 2, 1)
	ida, _ := s.Attach(0, 0x11, 1, a)
	idb, _ := s.Attach(1, 0x22, 0, b)
	s.Observe(obs(func(now sm.Time, id fabric.EndpointID, out *sm.Output) {
		for _, c := range out.Completions {
			fmt.Printf("%.1f µs node %d: %s %s imm=%#x\n", float64(now)/1000, id, c.Opcode, c.Status, c.Imm)
		}
	}))
	s.Input(idb, func(now sm.Time, out *sm.Output) { _ = b.PostRecv(now, 1, out) })
	s.Input(ida, func(now sm.Time, out *sm.Output) {
		_ = a.Post(now, sm.WorkRequest{WRID: 7, Opcode: sm.OpWriteImm, RemoteVA: 0x1000, RKey: 1,
			Data: make([]byte, 1<<20), Imm: 0xC0FFEE}, out)
	})
	s.Run(sm.Millisecond)
	st := s.Stats()
	fmt.Printf("%d packets delivered, %d dropped\n", st.Delivered, st.TotalDropped())
	// Output:
	// 13.8 µs node 1: RECV_RDMA_WITH_IMM SUCCESS imm=0xc0ffee
	// 15.8 µs node 0: RDMA_WRITE_WITH_IMM SUCCESS imm=0x0
	// 517 packets delivered, 0 dropped
}

// Each node has one address per plane in the per-plane addressing mode
// (Config.PlaneAddresses).
func ExamplePlaneAddr() {
	for plane := 0; plane < 2; plane++ {
		fmt.Println(plane, fabric.PlaneAddr(0, plane, true), fabric.PlaneAddr(1, plane, true), fabric.PlaneAddr(1, plane, false))
	}
	// Output:
	// 0 fd00::1 fd00::2 10.1.0.1
	// 1 fd00:1::1 fd00:1::2 10.2.0.1
}

package statemachine_test

import (
	"bytes"
	"fmt"

	"github.com/openmrc/mrc/statemachine"
)

// Two QPs in memory, A writing 64 KiB with immediate data into B: the
// caller moves A's packets to B and B's SACKs back, lets time pass, and
// reads the completions. Packets stay wire.Packet values here; a real
// data path encodes them with wire.Codec.Append and decodes what arrives
// with wire.Codec.Decode.
func Example() {
	const qpnA, qpnB = 0x000101, 0x000201
	// Each QP sits on a Node of its own (one NIC each): DefaultConfig is
	// the NIC's configuration, DefaultQPConfig the QP's own.
	qa, qb := statemachine.DefaultQPConfig(qpnA, 1), statemachine.DefaultQPConfig(qpnB, 2)
	qb.Addr.SrcIP, qb.Addr.DstIP = qa.Addr.DstIP, qa.Addr.SrcIP
	a, err := statemachine.New(statemachine.DefaultConfig(1), qa)
	if err != nil {
		panic(err)
	}
	b, err := statemachine.New(statemachine.DefaultConfig(2), qb)
	if err != nil {
		panic(err)
	}
	var outA, outB statemachine.Output
	// BringUp walks RESET → INIT → RTR → RTS with the attributes each
	// transition needs (see the package documentation for every field).
	if err := a.BringUp(0, attr(qpnB), &outA); err != nil {
		panic(err)
	}
	if err := b.BringUp(0, attr(qpnA), &outB); err != nil {
		panic(err)
	}
	// A WriteIMM consumes a posted receive at the responder.
	if err := b.PostRecv(0, 900, &outB); err != nil {
		panic(err)
	}
	msg := make([]byte, 64<<10)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	const va = 0x10000
	if err := a.Post(0, statemachine.WorkRequest{WRID: 1, Opcode: statemachine.OpWriteImm, RemoteVA: va, RKey: 1, Data: msg, Imm: 0xC0FFEE}, &outA); err != nil {
		panic(err)
	}

	mem := make([]byte, len(msg)) // B's memory at va
	var done []statemachine.Completion
	now := statemachine.Time(0)
	for len(done) < 2 && now < statemachine.Second {
		now += statemachine.Microsecond
		a.Advance(now, &outA)
		for _, o := range outA.Packets { // A → B, port = plane + 1
			b.Receive(now, int(o.Plane)+1, &o.Pkt, &outB)
		}
		for _, pl := range outB.Placements {
			copy(mem[pl.VA-va:], pl.Data) // Data aliases the packet: copy it
		}
		outA.Packets = outA.Packets[:0]
		for _, o := range outB.Packets { // B's SACKs → A
			a.Receive(now, int(o.Plane)+1, &o.Pkt, &outA)
		}
		done = append(append(done, outA.Completions...), outB.Completions...)
		outA.Completions = outA.Completions[:0]
		outB.Reset()
	}
	for _, c := range done {
		fmt.Printf("QP %#06x: WR %d %s, receive %v, %d bytes, imm %#x\n", c.QPN, c.WRID, c.Status, c.Recv, c.ByteLen, c.Imm)
	}
	fmt.Println("B's memory holds the message:", bytes.Equal(mem, msg))
	fmt.Println("both QPs in", a.State(), "and", b.State())
	// Output:
	// QP 0x000101: WR 1 SUCCESS, receive false, 65536 bytes, imm 0x0
	// QP 0x000201: WR 900 SUCCESS, receive true, 65536 bytes, imm 0xc0ffee
	// B's memory holds the message: true
	// both QPs in RTS and RTS
}

// attr is a QP's full attribute set (Attr, mrc_modify_qp's attributes):
// every field, with the value a two-node setup uses.
func attr(destQPN uint32) statemachine.Attr {
	return statemachine.Attr{
		EVProfileID: 1,  // an EVProfile of the Config (DefaultConfig's is 1)
		CCProfileID: 1,  // a CCProfile of the Config (NSCC)
		MPR:         8,  // requester window: 8 × 128 PSNs
		MPRDest:     8,  // responder window, the peer's MPR
		Cap:         0,  // no QPCap bits: trim NACKs on, dynamic MPR off
		MaxWIMM:     16, // WriteIMMs outstanding as requester
		MaxWIMMDest: 16, // WriteIMMs held as responder
		Timeout:     8,  // ACK timeout 1.024 µs × 2^8 ≈ 262 µs
		Retry:       statemachine.Retry{LinearCnt: 7, ExpCnt: statemachine.RetryInfinite},
		PKeyIndex:   0,    // recorded; the P_Key is QPConfig.Addr.PKey
		AccessFlags: 0,    // recorded; remote writes are checked against Config.MRs
		PathMTU:     4096, // bytes per packet
		DestQPN:     destQPN,
		RQPSN:       0, // first PSN this QP expects as responder
		SQPSN:       0, // first PSN it sends as requester
	}
}

// Expand a compact EV by the SRv6 example of the OCP API's
// ev_expansion.c: a fixed 32-bit locator, then four 16-bit uSIDs taken
// from the EV.
func ExampleExpandEV() {
	fmtWidths := []uint8{32, 16, 16, 16, 16}
	fields := []statemachine.EVField{{Width: 32, InitVal: 0xcafecafe}}
	for i := 0; i < 4; i++ {
		fields = append(fields, statemachine.EVField{Width: 16, Mask: 0xffff})
	}
	ev := statemachine.EVValue{0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44}
	out, bits, err := statemachine.ExpandEV(fmtWidths, fields, ev)
	fmt.Printf("%x (%d bits) %v\n", out[:bits/8], bits, err)
	// Output: cafecafe1111222233334444 (96 bits) <nil>
}

// A GEN-mode EV profile through its lifecycle: an EV Format profile
// ONLINE, the EV profile OFFLINE with its fields, then ONLINE; the
// Controller hands a Node the generated EVs' expansions.
func ExampleController() {
	c, _ := statemachine.NewController(statemachine.DefaultDeviceAttr(2), statemachine.CtlPolicy{})
	_ = c.ModifyEVFmtProfile(13, &statemachine.EVFmtAttr{State: statemachine.ProfileOffline, Mode: statemachine.EVFmtSTEV,
		Widths: []uint8{16}}, statemachine.EVFmtAttrState|statemachine.EVFmtAttrMode|statemachine.EVFmtAttrOp)
	_ = c.ModifyEVFmtProfile(13, &statemachine.EVFmtAttr{State: statemachine.ProfileOnline}, statemachine.EVFmtAttrState)
	err := c.ModifyEVProfile(1, &statemachine.EVProfileAttr{State: statemachine.ProfileOffline, Mode: statemachine.EVModeGenerated,
		FmtProfileID: 13, Count: 4, MinActive: 1, EventMask: statemachine.EVEventGood, FieldsOp: statemachine.FieldsModify,
		Fields: []statemachine.EVField{{Width: 16, InitVal: 0xa500, MaxVal: 255, Mask: 0xff}}},
		statemachine.EVAttrState|statemachine.EVAttrMode|statemachine.EVAttrFmtID|statemachine.EVAttrCount|
			statemachine.EVAttrMinActive|statemachine.EVAttrEventMask|statemachine.EVAttrFieldsOp)
	fmt.Println(err)
	fmt.Println(c.ModifyEVProfile(1, &statemachine.EVProfileAttr{State: statemachine.ProfileOnline}, statemachine.EVAttrState))
	p, _, _ := c.EVProfile(1)
	for _, e := range p.EVs {
		fmt.Printf("%#x on port %d\n", e.Value, e.Port)
	}
	// Output:
	// <nil>
	// <nil>
	// 0xa500 on port 1
	// 0xa501 on port 2
	// 0xa502 on port 1
	// 0xa503 on port 2
}

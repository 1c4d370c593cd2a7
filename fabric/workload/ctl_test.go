package workload_test

import (
	"testing"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/fabric/workload"
	"github.com/openmrc/mrc/spec"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// evSink decodes every frame entering the fabric and records the EV of
// each data packet.
type evSink struct {
	codec *wire.Codec
	pkt   wire.Packet
	evs   map[uint32]int
}

func (s *evSink) Open(int) error { return nil }
func (s *evSink) Flush() error   { return nil }
func (s *evSink) Frame(f *fabric.Frame) {
	if f.Point != fabric.AtTx || s.codec.Decode(f.Data, &s.pkt) != nil || !s.pkt.BTH.Opcode.IsWrite() {
		return
	}
	s.evs[s.pkt.EV(wire.EVModeSTEV)]++
}

// TestControllerProfileOnFabric: the fabric simulator runs QPs whose EV
// profile a Controller generated (GEN mode, CTL-GEN-1, CTL-GEN-3): the
// writes complete through loss with every invariant holding, and the data
// packets carry only expansions of generated EVs.
func TestControllerProfileOnFabric(t *testing.T) {
	const planes = 4
	c, err := sm.NewController(sm.DefaultDeviceAttr(planes), sm.CtlPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ModifyEVFmtProfile(13, &sm.EVFmtAttr{State: sm.ProfileOffline, Mode: sm.EVFmtSTEV, Widths: []uint8{16}},
		sm.EVFmtAttrState|sm.EVFmtAttrMode|sm.EVFmtAttrOp); err != nil {
		t.Fatal(err)
	}
	if err := c.ModifyEVFmtProfile(13, &sm.EVFmtAttr{State: sm.ProfileOnline}, sm.EVFmtAttrState); err != nil {
		t.Fatal(err)
	}
	gen := sm.EVProfileAttr{State: sm.ProfileOffline, Mode: sm.EVModeGenerated, FmtProfileID: 13, Count: 16 * planes, MinActive: 4,
		EventMask: sm.EVEventGood, FieldsOp: sm.FieldsModify, Fields: []sm.EVField{{Width: 16, InitVal: 0xA500, MaxVal: 255, Mask: 0xFF}}}
	if err := c.ModifyEVProfile(1, &gen, sm.EVAttrState|sm.EVAttrMode|sm.EVAttrFmtID|sm.EVAttrCount|sm.EVAttrMinActive|
		sm.EVAttrEventMask|sm.EVAttrFieldsOp); err != nil {
		t.Fatal(err)
	}
	if err := c.ModifyEVProfile(1, &sm.EVProfileAttr{State: sm.ProfileOnline}, sm.EVAttrState); err != nil {
		t.Fatal(err)
	}
	prof, _, err := c.EVProfile(1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sm.DefaultConfig(1)
	cfg.EVProfiles = []sm.EVProfile{prof}
	codec, err := wire.NewCodec(spec.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	sink := &evSink{codec: codec, evs: map[uint32]int{}}
	h, err := workload.New(workload.Options{Fabric: fabric.Config{Seed: 3, Planes: planes, Frames: sink}, MRC: cfg, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := h.Connect(0, 1, workload.MRC)
	if err != nil {
		t.Fatal(err)
	}
	loss := fabric.NewRule()
	loss.Drop = 0.02
	if _, err := h.Sim.AddRule(loss); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 8; k++ {
		if _, err := h.Post(workload.WR{Conn: conn.ID, Imm: k%2 == 1, Chunk: 16 * k, Size: 64 << 10}); err != nil {
			t.Fatal(err)
		}
	}
	h.Sim.RunUntil(func() bool { return h.Outstanding() == 0 }, sm.Second)
	h.Finish()
	if conn.Completed != 8 || len(h.Violations()) != 0 {
		t.Fatalf("%d of 8 writes completed, violations %v", conn.Completed, h.Violations())
	}
	if len(sink.evs) < 2 {
		t.Fatalf("data on %d EVs", len(sink.evs))
	}
	for ev := range sink.evs {
		if ev&0xFF00 != 0xA500 || ev&0xFF >= 16*planes {
			t.Errorf("data packet on EV %#x: not a generated EV's expansion", ev)
		}
	}
}

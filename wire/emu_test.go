package wire_test

import (
	"slices"
	"testing"

	"github.com/openmrc/mrc/internal/emuclient"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

func emuCodec(t *testing.T) *wire.Codec {
	t.Helper()
	c, err := wire.NewCodec(spec.EmuProfile())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEmuPresetDecodesEmulatorFrames: frames built as MRC-Client's
// PacketBuilder encodes them decode under the emu preset to the fields
// the emulator meant: the EV with its halves in its order (AMB-23), SE
// and M in its order (AMB-4), its ERTH op numbering (AMB-25), NETH
// cc_type 2 (AMB-34), and an ICRC that verifies (AMB-90).
func TestEmuPresetDecodesEmulatorFrames(t *testing.T) {
	c := emuCodec(t)
	imm := uint32(0xCAFEF00D)
	payload := []byte("0123456789abcdef")
	w := emuclient.Write(emuclient.HostA, emuclient.HostB, 0x123, 77, 0xA1B2C3D4, 0x1000, 0x55, payload, 5, 0, &imm, true)
	w.SE = true
	cases := []struct {
		name  string
		f     emuclient.Frame
		check func(t *testing.T, p *wire.Packet)
	}{
		{"write only imm, rtx, SE", w, func(t *testing.T, p *wire.Packet) {
			if p.BTH.Opcode != wire.OpWriteOnlyImm || !p.BTH.SE || p.BTH.M || !p.BTH.Retransmit || p.BTH.AckReq ||
				p.BTH.DestQP != 0x123 || p.BTH.PSN != 77 || p.ImmDt != imm || p.RETH.VA != 0x1000 || p.RETH.RKey != 0x55 ||
				p.RETH.DMALength != uint32(len(payload)) || string(p.Payload) != string(payload) || p.METH.MSN != 5 {
				t.Errorf("write decoded as %+v %+v %+v", p.BTH, p.METH, p.RETH)
			}
		}},
		{"SACK", emuclient.SACK(emuclient.HostB, emuclient.HostA, 0x456, 0x123, 90, -3, 1, 0b1011, 2, 1, 0xA1B2C3D4), func(t *testing.T, p *wire.Packet) {
			s := &p.SETH
			if p.BTH.Opcode != wire.OpSACK || s.CACKPSN != 90 || s.AckPSNOffset != -3 || s.SACKOffset != 1 || s.SACKBitmap != 0b1011 ||
				s.MPR != 2 || s.M != wire.MSkipOnce || s.Entropy != 0xA1B2C3D4 || s.SPDCID != 0x456 || s.DPDCID != 0x123 {
				t.Errorf("SACK decoded as %+v", s)
			}
		}},
		{"NACK", emuclient.NACK(emuclient.HostB, emuclient.HostA, 0x456, 0x123, 91, uint8(wire.NACKTrimmed), 0xA1B2C3D4), func(t *testing.T, p *wire.Packet) {
			n := &p.NETH
			if n.NACKPSN != 91 || n.Reason != wire.NACKTrimmed || n.CCType != 2 || n.Entropy != 0xA1B2C3D4 {
				t.Errorf("NACK decoded as %+v", n)
			}
		}},
		{"probe", emuclient.Probe(emuclient.HostA, emuclient.HostB, 0x123, 0x456, 7, 0x00010002), func(t *testing.T, p *wire.Packet) {
			if p.BTH.Opcode != wire.OpProbe || p.PETH.ProbeID != 7 || p.PETH.FType != 1 {
				t.Errorf("probe decoded as %+v", p.PETH)
			}
		}},
		{"EV probe", emuclient.EVProbe(emuclient.HostA, emuclient.HostB, 9, 0x00030004), func(t *testing.T, p *wire.Packet) {
			if p.ERTH.Op != wire.EPEVProbe || p.BTH.DestQP != wire.EndpointQPN || p.BTH.PSN != 9 {
				t.Errorf("EV probe decoded as op %s, %+v", p.ERTH.Op, p.BTH)
			}
		}},
		{"port status", emuclient.PortStatus(emuclient.HostA, emuclient.HostB, 10, 0b0110), func(t *testing.T, p *wire.Packet) {
			if p.ERTH.Op != wire.EPPortStatusUpdate || p.ERTH.PortStatusMask != 0b0110 {
				t.Errorf("port status decoded as op %s mask %#x", p.ERTH.Op, p.ERTH.PortStatusMask)
			}
		}},
		{"EV probe response", emuclient.EPResponse(emuclient.HostB, emuclient.HostA, 9, emuclient.EPEVProbe, 0x00030004), func(t *testing.T, p *wire.Packet) {
			if p.EETH.Op != wire.EPEVProbe {
				t.Errorf("response decoded as op %s", p.EETH.Op)
			}
		}},
	}
	for _, tc := range cases {
		b := tc.f.Bytes()
		var p wire.Packet
		if err := c.Decode(b, &p); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		tc.check(t, &p)
		if ev := c.EV(&p, wire.EVModeSTEV); ev != tc.f.EV {
			t.Errorf("%s: EV %#08x, the emulator sent %#08x", tc.name, ev, tc.f.EV)
		}
		if !c.VerifyICRC(b, &p) || p.ICRC != emuclient.ICRC(b[14+40+8:len(b)-4]) {
			t.Errorf("%s: ICRC 0x%08x does not verify under the emu preset", tc.name, p.ICRC)
		}
		for _, v := range c.Check(b, &p, nil) {
			t.Errorf("%s: violation under the emu preset: %s", tc.name, v)
		}
		// Under the default profile the same frame fails its ICRC and
		// reads the EV with its halves the other way round.
		var q wire.Packet
		if err := wire.Default.Decode(b, &q); err == nil {
			if wire.Default.VerifyICRC(b, &q) {
				t.Errorf("%s: the emulator's ICRC verifies under the default profile", tc.name)
			}
			if ev := wire.Default.EV(&q, wire.EVModeSTEV); tc.f.EV>>16 != tc.f.EV&0xFFFF && ev == tc.f.EV {
				t.Errorf("%s: the default profile reads the emulator's EV in its order", tc.name)
			}
		}
	}
}

// TestEmuICRCEncode: a codec under the emu preset writes the ICRC the
// emulator computes, most significant byte first, and its own frames
// round-trip with the EV halves, flag order and ERTH ops of the preset.
func TestEmuICRCEncode(t *testing.T) {
	c := emuCodec(t)
	ref := emuclient.EVProbe(emuclient.HostA, emuclient.HostB, 3, 0x11112222).Bytes()
	var p wire.Packet
	if err := c.Decode(ref, &p); err != nil {
		t.Fatal(err)
	}
	out, err := c.Append(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out, ref) {
		t.Errorf("re-encoded under the emu preset:\n% x\nthe emulator's frame:\n% x", out, ref)
	}
	p.SetEV(0, wire.EVModeSTEV)
	c.SetEV(&p, 0x11112222, wire.EVModeSTEV)
	if p.UDP.SrcPort != 0x1111 || p.IP6.FlowLabel != 0x2222 {
		t.Errorf("SetEV under the emu preset: source port %#x, flow label %#x", p.UDP.SrcPort, p.IP6.FlowLabel)
	}
}

// TestERTHOpOrderAPI: under the API's numbering (AMB-25) the wire values
// of the two ops swap in both directions.
func TestERTHOpOrderAPI(t *testing.T) {
	prof := spec.DefaultProfile()
	prof.ERTHOpOrder = spec.ERTHOpAPI
	c, err := wire.NewCodec(prof)
	if err != nil {
		t.Fatal(err)
	}
	b := emuclient.EVProbe(emuclient.HostA, emuclient.HostB, 3, 0).Bytes() // wire op 1
	var p wire.Packet
	if err := c.Decode(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.ERTH.Op != wire.EPPortStatusUpdate {
		t.Errorf("wire op 1 under the API numbering decoded as %s", p.ERTH.Op)
	}
	out, err := c.Append(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	if out[14+40+8+12+1]&3 != 1 {
		t.Errorf("re-encoded op %d, want wire value 1", out[14+40+8+12+1]&3)
	}
}

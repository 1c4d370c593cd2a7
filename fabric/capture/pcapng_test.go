package capture_test

import (
	"bytes"
	"testing"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/fabric/capture"
	"github.com/openmrc/mrc/pcap"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// endpoint is a bare endpoint that takes what reaches it.
type endpoint struct{}

func (endpoint) Receive(sm.Time, int, *wire.Packet, *sm.Output) {}
func (endpoint) Advance(sm.Time, *sm.Output)                    {}
func (endpoint) NextDeadline() sm.Time                          { return sm.Never }

func write(psn uint32, plane uint8) sm.Outgoing {
	o := sm.Outgoing{EV: 0x100 + uint32(plane)<<11, Plane: plane, Class: sm.ClassTrimmable}
	p := &o.Pkt
	p.IP4.Src, p.IP4.Dst = [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}
	p.SetEV(o.EV, wire.EVModeSTEV)
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: 0x10, PSN: psn}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 1, DMALength: 256}
	p.Payload = make([]byte, 256)
	return o
}

// TestPcapng: the pcapng has a tx and an rx interface per plane, every
// frame decodes with the wire codec, and comments name the packet.
func TestPcapng(t *testing.T) {
	var cp bytes.Buffer
	s, err := fabric.New(fabric.Config{Nodes: 2, Planes: 2, Frames: capture.NewPcapng(&cp)})
	if err != nil {
		t.Fatal(err)
	}
	from, err := s.Attach(0, 0x10, 1, endpoint{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Attach(1, 0x10, 0, endpoint{}); err != nil {
		t.Fatal(err)
	}
	s.Input(from, func(now sm.Time, out *sm.Output) { out.Packets = append(out.Packets, write(1, 0), write(2, 1)) })
	s.Run(sm.Never)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := pcap.NewReader(&cp)
	if err != nil {
		t.Fatal(err)
	}
	d := &pcap.Decoder{}
	var names []string
	err = d.Each(r, func(rec *pcap.Record) error {
		if rec.Err != nil {
			t.Errorf("frame %d: %v", rec.Number, rec.Err)
		}
		names = append(names, rec.Iface.Name)
		if len(rec.Frame.Comments) != 1 || !bytes.HasPrefix(rec.Frame.Comments[0], []byte("pkt=")) {
			t.Errorf("frame %d comments %q", rec.Number, rec.Frame.Comments)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"tx/plane0", "tx/plane1", "rx/plane0", "rx/plane1"}
	if len(names) != 4 {
		t.Fatalf("interfaces %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("frame %d on %s, want %s", i+1, names[i], want[i])
		}
	}
}

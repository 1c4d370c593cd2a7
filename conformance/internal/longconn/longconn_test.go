package longconn

import (
	"bytes"
	"testing"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// TestWrite: the capture holds at least the frames asked for, all of one
// QP pair (writes to 0x201, feedback to 0x101), at least 80 % writes,
// every frame decodes with
// no strict-check violation, and two runs write the same bytes.
func TestWrite(t *testing.T) {
	const frames = 5000
	var a, b bytes.Buffer
	n, err := Write(&a, frames)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(&b, frames); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two runs wrote different captures")
	}
	r, err := pcap.NewReader(&a)
	if err != nil {
		t.Fatal(err)
	}
	seen, writes := 0, 0
	qps := map[uint32]int{}
	err = (&pcap.Decoder{Codec: wire.Default}).Each(r, func(rec *pcap.Record) error {
		seen++
		if rec.Err != nil || len(rec.Violations) > 0 {
			t.Fatalf("frame %d: %v %v", rec.Number, rec.Err, rec.Violations)
		}
		qps[rec.Packet.BTH.DestQP]++
		if rec.Packet.BTH.Opcode.IsWrite() {
			writes++
			if len(rec.Packet.Payload) != MTU {
				t.Fatalf("frame %d: %d payload bytes, want %d", rec.Number, len(rec.Packet.Payload), MTU)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != n || n < frames || n > frames+4096 {
		t.Errorf("%d frames read, %d written, %d asked", seen, n, frames)
	}
	if len(qps) != 2 || qps[0x201] < writes || writes < n*8/10 {
		t.Errorf("frames by destination QP %v, %d writes: want one QP pair, mostly writes", qps, writes)
	}
}

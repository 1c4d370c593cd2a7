package pcap

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// writeOnly returns the frame of an IPv4 WRITE_ONLY of PSN 7 with 1024
// payload bytes of 0xA5.
func writeOnly(t *testing.T) []byte {
	t.Helper()
	p := wire.Packet{}
	p.IP4 = wire.IPv4{TTL: 64, TOS: 4 << 2, FlagsFrag: 0x4000}
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: 0x42, PSN: 7}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 3, DMALength: 1024}
	p.Payload = bytes.Repeat([]byte{0xA5}, 1024)
	frame, err := wire.Default.Append(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

// TestDecoderCut: with Cut, a frame the snap length cut after its headers
// decodes from them (Record.Cut, Data rebuilt to its length), its ICRC
// neither good nor a violation; without Cut, it fails as truncated, as
// before. A frame not cut decodes alike either way.
func TestDecoderCut(t *testing.T) {
	frame := writeOnly(t)
	f := Frame{Data: frame[:128], Length: len(frame)}
	var r Record
	(&Decoder{Cut: true}).Decode(&f, nil, &r)
	if r.Err != nil || !r.Cut || r.ICRCOK || len(r.Data) != len(frame) || len(r.Packet.Payload) != 1024 || r.Packet.BTH.PSN != 7 {
		t.Fatalf("cut frame with Cut: err %v, cut %v, icrc ok %v, %d bytes, payload %d", r.Err, r.Cut, r.ICRCOK, len(r.Data), len(r.Packet.Payload))
	}
	for _, v := range r.Violations {
		t.Errorf("cut frame: violation %s", v.Message())
	}
	(&Decoder{}).Decode(&f, nil, &r)
	if r.Err == nil || r.Cut {
		t.Errorf("cut frame without Cut: err %v, cut %v; want a truncated error", r.Err, r.Cut)
	}
	whole := Frame{Data: frame, Length: len(frame)}
	(&Decoder{Cut: true}).Decode(&whole, nil, &r)
	if r.Err != nil || r.Cut || !r.ICRCOK {
		t.Errorf("whole frame with Cut: err %v, cut %v, icrc ok %v", r.Err, r.Cut, r.ICRCOK)
	}
}

// TestPrintCut: a frame cut by the snap length prints as what the capture
// holds: its headers, its bytes captured (caplen), its payload's length
// but no payload byte, and no ICRC (not in the capture), which the
// display filter's ICRC fields do not match either. Before, mrc-conform
// decode showed such a write as MALFORMED, breaking WIRE-LEN-1.
func TestPrintCut(t *testing.T) {
	frame := writeOnly(t)
	f := Frame{Number: 1, Data: frame[:128], Length: len(frame)}
	var r Record
	(&Decoder{Cut: true}).Decode(&f, nil, &r)
	for format, want := range map[OutputFormat][]string{
		OutputText:    {"RDMA_WRITE_ONLY", "psn=7", "[cut by the snap length: 128 of " + strconv.Itoa(len(frame)) + " bytes]"},
		OutputVerbose: {"128 captured", "Payload: 1024 bytes, pad_count 0, not in the capture", "ICRC: not in the capture"},
		OutputJSON:    {`"caplen":128`, `"payload_len":1024`},
	} {
		var b bytes.Buffer
		pr := NewPrinter(&b, format, nil, wire.EVModeSTEV)
		if err := pr.Print(&r); err != nil {
			t.Fatal(err)
		}
		pr.Flush()
		out := b.String()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("format %d: %q lacks %q", format, out, w)
			}
		}
		for _, bad := range []string{"MALFORMED", "a5a5", `"icrc"`, "WIRE-LEN-1"} {
			if strings.Contains(out, bad) {
				t.Errorf("format %d: %q shows %q", format, out, bad)
			}
		}
	}
	for _, expr := range []string{"mrc.icrc_ok == 0", "mrc.icrc_ok == 1", "mrc.icrc"} {
		flt, err := CompileFilter(expr, nil)
		if err != nil {
			t.Fatal(err)
		}
		if flt.Match(&r) {
			t.Errorf("%s matches a frame whose ICRC the capture does not hold", expr)
		}
	}
}

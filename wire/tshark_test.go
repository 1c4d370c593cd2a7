package wire_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/openmrc/mrc/internal/testenv"
	"github.com/openmrc/mrc/wire"
)

// crossFrame is a frame for the tshark cross-check and the values our
// codec assigns to tshark's field names.
type crossFrame struct {
	b    []byte
	want map[string]uint64
}

func bthFields(h *wire.BTH, op uint8) map[string]uint64 {
	u := func(b bool) uint64 {
		if b {
			return 1
		}
		return 0
	}
	return map[string]uint64{"infiniband.bth.opcode": uint64(op), "infiniband.bth.se": u(h.SE), "infiniband.bth.m": u(h.M),
		"infiniband.bth.padcnt": uint64(h.PadCount), "infiniband.bth.tver": uint64(h.TVer), "infiniband.bth.p_key": uint64(h.PKey),
		"infiniband.bth.destqp": uint64(h.DestQP), "infiniband.bth.a": u(h.AckReq), "infiniband.bth.psn": uint64(h.PSN)}
}

// crossFrames builds MRC frames of every opcode (tshark decodes their BTH),
// plus RC twins of WRITE_ONLY and ACK built from our RETH and AETH encoders
// (tshark decodes RETH and AETH only under RC opcodes).
func crossFrames(t *testing.T) []crossFrame {
	var out []crossFrame
	ops := []wire.Opcode{wire.OpWriteFirst, wire.OpWriteMiddle, wire.OpWriteLast, wire.OpWriteLastImm, wire.OpWriteOnly,
		wire.OpWriteOnlyImm, wire.OpAcknowledge, wire.OpEndpointReq, wire.OpEndpointResp, wire.OpSACK, wire.OpNACK, wire.OpProbe}
	for i, op := range ops {
		for v6 := 0; v6 < 2; v6++ {
			p := wire.Packet{IsIPv6: v6 == 1}
			p.IP4.TTL, p.IP6.HopLimit = 64, 64
			p.BTH = wire.BTH{Opcode: op, SE: i%2 == 0, M: i%3 == 0, PKey: uint16(0x8000 + i), DestQP: uint32(0xABC00 + i),
				AckReq: i%2 == 1, PSN: uint32(0xFFFFF0 + i)}
			if op.IsWrite() {
				p.RETH = wire.RETH{VA: 0x1122334455667788 + uint64(i), RKey: 0xCAFE0000 + uint32(i), DMALength: uint32(100 + i)}
				p.Payload = bytes.Repeat([]byte{0xEE}, 13+i)
			}
			b, err := wire.Default.Append(nil, &p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, crossFrame{b, bthFields(&p.BTH, uint8(op))})

			var d wire.Packet
			if err := wire.Default.Decode(b, &d); err != nil {
				t.Fatal(err)
			}
			_, _, bth := d.Offsets()
			rc := append([]byte(nil), b...)
			switch op {
			case wire.OpWriteOnly: // RC RDMA WRITE Only (0x0A): BTH | RETH | payload
				rc[bth] = 0x0A
				reth := wire.RETH{VA: 0x0102030405060708, RKey: 0x99887766, DMALength: uint32(len(p.Payload) + 4)}
				copy(rc[bth+12:], reth.Append(nil))
				f := bthFields(&p.BTH, 0x0A)
				f["infiniband.reth.va"], f["infiniband.reth.r_key"], f["infiniband.reth.dmalen"] = reth.VA, uint64(reth.RKey), uint64(reth.DMALength)
				binary.LittleEndian.PutUint32(rc[len(rc)-4:], wire.Default.ComputeICRC(rc, &d))
				out = append(out, crossFrame{rc, f})
			case wire.OpAcknowledge: // RC Acknowledge (0x11): BTH | AETH
				rc[bth] = 0x11
				aeth := wire.AETH{Syndrome: wire.AETHNoCredit, MSN: 0x123456}
				copy(rc[bth+12:], aeth.Append(nil))
				f := bthFields(&p.BTH, 0x11)
				f["infiniband.aeth.syndrome"], f["infiniband.aeth.msn"] = uint64(aeth.Syndrome), uint64(aeth.MSN)
				binary.LittleEndian.PutUint32(rc[len(rc)-4:], wire.Default.ComputeICRC(rc, &d))
				out = append(out, crossFrame{rc, f})
			}
		}
	}
	return out
}

// TestTsharkCrossCheck: tshark's RRoCE dissector decodes the BTH of every
// frame wire/ builds, and the RETH and AETH of their RC twins, with the
// same field values (WIRE-BTH-1, WIRE-RETH-1, WIRE-AETH-1, WIRE-UDP-1).
func TestTsharkCrossCheck(t *testing.T) {
	tshark := testenv.LookPath(t, "tshark")
	frames := crossFrames(t)
	var bs [][]byte
	for _, fr := range frames {
		bs = append(bs, fr.b)
	}
	names := []string{"infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.m", "infiniband.bth.padcnt",
		"infiniband.bth.tver", "infiniband.bth.p_key", "infiniband.bth.destqp", "infiniband.bth.a", "infiniband.bth.psn",
		"infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen", "infiniband.aeth.syndrome", "infiniband.aeth.msn"}
	checked := 0
	for i, cols := range tsharkFields(t, tshark, bs, names, "occurrence=f") {
		for j, n := range names {
			want, ok := frames[i].want[n]
			if !ok {
				continue
			}
			got, err := parseTshark(cols[j])
			if err != nil || got != want {
				t.Errorf("frame %d %s: tshark %q, wire %#x (%v)", i+1, n, cols[j], want, err)
			}
			checked++
		}
	}
	t.Logf("%d frames, %d field values agree with tshark", len(frames), checked)
}

// tsharkFields has tshark print the named fields of frames, with the
// given -E options, and returns each frame's values, one column a name.
func tsharkFields(t *testing.T, tshark string, frames [][]byte, names []string, opts ...string) [][]string {
	args := []string{"-r", writePcap(t, frames), "-T", "fields", "-E", "separator=;"}
	for _, o := range opts {
		args = append(args, "-E", o)
	}
	for _, n := range names {
		args = append(args, "-e", n)
	}
	out, err := exec.Command(tshark, args...).Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(frames) {
		t.Fatalf("tshark printed %d lines for %d frames:\n%s", len(lines), len(frames), out)
	}
	cols := make([][]string, len(lines))
	for i, line := range lines {
		cols[i] = strings.Split(line, ";")
	}
	return cols
}

// writePcap writes frames to a pcap file in a test directory and returns
// its path.
func writePcap(t *testing.T, frames [][]byte) string {
	path := filepath.Join(t.TempDir(), "cross.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for i, b := range frames {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1700000000, int64(i)*1000), CaptureLength: len(b), Length: len(b)}
		if err := w.WritePacket(ci, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func parseTshark(s string) (uint64, error) {
	switch s {
	case "True":
		return 1, nil
	case "False":
		return 0, nil
	}
	if strings.HasPrefix(s, "0x") {
		return strconv.ParseUint(s[2:], 16, 64)
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	return v, nil
}

// linkFrames builds a write of every frame shape: IPv4 and IPv6, each
// with and without an 802.1Q tag, and SRv6 with and without an SRH.
func linkFrames(t *testing.T) [][]byte {
	var out [][]byte
	for i, shape := range []struct{ v6, vlan, srv6, srh bool }{
		{false, false, false, false}, {false, true, false, false}, {true, false, false, false},
		{true, true, false, false}, {true, false, true, false}, {true, true, true, true}} {
		p := wire.Packet{IsIPv6: shape.v6, SRv6: shape.srv6, HasSRH: shape.srh}
		p.Eth = wire.Ethernet{Dst: [6]byte{2, 0, 0, 0, 0, 0xb}, Src: [6]byte{2, 0, 0, 0, byte(i), 0xa},
			HasVLAN: shape.vlan, VLANTCI: uint16(0x2000 + 100 + i)}
		p.IP4 = wire.IPv4{TOS: 0x12 << 2, ID: uint16(0x1234 + i), TTL: 63, Checksum: 0xBEEF,
			Src: [4]byte{10, 0, 0, byte(i)}, Dst: [4]byte{10, 0, 1, 2}}
		p.IP6 = wire.IPv6{TrafficClass: 0x0A<<2 | 1, FlowLabel: uint32(0xABCDE + i), HopLimit: 60,
			Src: [16]byte{0xfd, 0, 14: byte(i), 15: 1}, Dst: [16]byte{0xfd, 0, 15: 2}}
		p.Outer = wire.IPv6{TrafficClass: 0x04 << 2, FlowLabel: 0x12345, HopLimit: 33,
			Src: [16]byte{0xfc, 0, 15: 1}, Dst: [16]byte{0xfc, 0, 15: 9}}
		p.SRH = wire.SRH{SegmentsLeft: 1, LastEntry: 1, Flags: 0x5A, Tag: 0x0102,
			Segments: [wire.MaxSRHSegments][16]byte{{0xfc, 0, 15: 9}, {0xfc, 0, 15: 8}}}
		p.UDP.SrcPort, p.UDP.Checksum = uint16(0xC000+i), 0x1357
		p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: 0x1234, PSN: uint32(i)}
		p.RETH = wire.RETH{VA: 0x1000, RKey: 7, DMALength: 16}
		p.Payload = bytes.Repeat([]byte{0xEE}, 16)
		b, err := wire.Default.Append(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestTsharkLinkFields (WIRE-ENC-1, WIRE-ENC-2, WIRE-UDP-1): each field of
// wire's link header table that names a Wireshark field is that field:
// tshark reads, under that name, the value the table reads, in every
// occurrence (an SRv6 frame's outer IPv6 header, then its inner one), on
// frames of every shape.
func TestTsharkLinkFields(t *testing.T) {
	tshark := testenv.LookPath(t, "tshark")
	frames := linkFrames(t)
	var names []string
	col := map[string]int{}
	for _, h := range wire.LinkHeaders() {
		for _, f := range h.Fields {
			if _, ok := col[f.Wireshark]; f.Wireshark != "" && !ok {
				col[f.Wireshark] = len(names)
				names = append(names, f.Wireshark)
			}
		}
	}
	checked := 0
	for i, cols := range tsharkFields(t, tshark, frames, names, "occurrence=a", "aggregator=|") {
		want := make([][]string, len(names)) // per name, each occurrence as the table reads it
		var d wire.Packet
		if err := wire.Default.Decode(frames[i], &d); err != nil {
			t.Fatal(err)
		}
		d.WalkLink(frames[i], func(h *wire.Header, off int) {
			hb := frames[i][off : off+h.Len]
			for _, f := range h.Fields {
				if f.Wireshark == "" {
					continue
				}
				v := strconv.FormatUint(f.Value(hb), 10)
				if f.Addr {
					v = fmt.Sprintf("%x", f.Bytes(hb))
				}
				want[col[f.Wireshark]] = append(want[col[f.Wireshark]], v)
				if f.Wireshark == "ipv6.version" { // Wireshark's IPv6 dissector fills ip.version too
					want[col["ip.version"]] = append(want[col["ip.version"]], v)
				}
			}
		})
		for j, n := range names {
			var got []string
			if cols[j] != "" {
				got = strings.Split(cols[j], "|")
			}
			if len(got) != len(want[j]) {
				t.Errorf("frame %d %s: tshark %q, table %v", i+1, n, cols[j], want[j])
				continue
			}
			for k := range got {
				g := tsharkCanon(got[k])
				if n == "ipv6.routing.srh.tag" { // tshark shows it in hex without 0x
					g = tsharkCanon("0x" + got[k])
				}
				if g != want[j][k] {
					t.Errorf("frame %d %s[%d]: tshark %q (%s), table %s", i+1, n, k, got[k], g, want[j][k])
				}
				checked++
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d values compared", checked)
	}
	t.Logf("%d frames, %d link field values agree with tshark", len(frames), checked)
}

// tsharkCanon returns a tshark field value as TestTsharkLinkFields
// writes the table's: an address as hex bytes, a number in decimal.
func tsharkCanon(s string) string {
	if a, err := netip.ParseAddr(s); err == nil {
		return fmt.Sprintf("%x", a.AsSlice())
	}
	if m, err := net.ParseMAC(s); err == nil {
		return fmt.Sprintf("%x", []byte(m))
	}
	if v, err := parseTshark(s); err == nil {
		return strconv.FormatUint(v, 10)
	}
	return s
}

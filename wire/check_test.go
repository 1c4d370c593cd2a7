package wire

import (
	"fmt"
	"slices"
	"testing"
)

// TestCheckOrder: a frame that breaks many rules at once gets one
// Violation per rule, in a fixed order (IP, UDP, BTH, the opcode's PSN
// rule, the BTH flags, the extended header, the ICRC) that the decode
// goldens and reports depend on, with the frame's values in the
// messages; CheckHeaders leaves the ICRC out and CheckComputed compares
// the ICRC given; a clean frame appends nothing.
func TestCheckOrder(t *testing.T) {
	var p Packet
	for _, q := range samplePackets() {
		if q.BTH.Opcode == OpSACK && !q.IsIPv6 && !q.SRv6 && !q.Eth.HasVLAN {
			p = q
			break
		}
	}
	if p.BTH.Opcode != OpSACK {
		t.Fatal("no IPv4 SACK sample")
	}
	clean := p
	p.IP4.FlagsFrag = 0
	p.UDP.Checksum = 0x1234
	p.BTH.TVer, p.BTH.Rsvd, p.BTH.TSPresent, p.BTH.Retransmit = 1, 0x40, true, true
	p.SETH.M, p.SETH.Rsvd2 = 3, 0x80
	b, err := Default.Append(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xFF
	var d Packet
	if err := Default.Decode(b, &d); err != nil {
		t.Fatal(err)
	}
	want := []string{"WIRE-ENC-5", "WIRE-UDP-3", "WIRE-BTH-3", "WIRE-BTH-7", "WIRE-SETH-10", "WIRE-BTH-6", "WIRE-BTH-5",
		"WIRE-GEN-2", "WIRE-SETH-3", "WIRE-ICRC-1"}
	reqs := func(vs []Violation) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.Req.String())
		}
		return out
	}
	vs := Default.Check(b, &d, nil)
	if got := reqs(vs); !slices.Equal(got, want) {
		t.Fatalf("Check: %v, want %v", got, want)
	}
	if v := vs[7]; v.Header != "SETH" || v.Message() != "reserved bits set (0x8000)" {
		t.Errorf("reserved bits: %v", v)
	}
	if v := vs[9]; v.Message() != fmt.Sprintf("ICRC 0x%08x, computed 0x%08x", d.ICRC, Default.ComputeICRC(b, &d)) {
		t.Errorf("ICRC: %v", v)
	}
	if got := reqs(Default.CheckHeaders(b, &d, nil)); !slices.Equal(got, want[:len(want)-1]) {
		t.Errorf("CheckHeaders: %v", got)
	}
	if got := reqs(Default.CheckComputed(b, &d, nil, d.ICRC)); !slices.Equal(got, want[:len(want)-1]) {
		t.Errorf("CheckComputed with the frame's ICRC: %v", got)
	}
	// A clean frame reports nothing and appends nothing to dst.
	c, err := Default.Append(nil, &clean)
	if err != nil {
		t.Fatal(err)
	}
	if err := Default.Decode(c, &d); err != nil {
		t.Fatal(err)
	}
	dst := make([]Violation, 0, 4)
	if vs := Default.Check(c, &d, dst); len(vs) != 0 {
		t.Errorf("a clean SACK: %v", vs)
	}
}

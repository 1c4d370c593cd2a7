package wire

// Tests written against mutants of linkfields.go that the package's other
// tests let live (scripts/mutate.sh; modelcheck/README "Mutation testing").

import "testing"

// TestMutantWalkLinkEthernetOnly: a frame of exactly an Ethernet header,
// decoded up to its cut IP header, still walks its Ethernet header.
func TestMutantWalkLinkEthernetOnly(t *testing.T) {
	v4, _ := fastWrites(t)
	b := v4[0][:14]
	var p Packet
	if err := Default.Decode(b, &p); err == nil || p.Eth.EtherType != EtherTypeIPv4 {
		t.Fatalf("%x: %v, EtherType %#x", b, err, p.Eth.EtherType)
	}
	var walked []string
	p.WalkLink(b, func(h *Header, off int) { walked = append(walked, h.Name) })
	if len(walked) != 1 || walked[0] != linkHeaders[0].Name {
		t.Errorf("WalkLink of a bare Ethernet header: %v", walked)
	}
}

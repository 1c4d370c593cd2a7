package pcap_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// TestLinkTypeRegistry checks each LinkType constant against gopacket's
// independent copy of the LINKTYPE registry, and the names String gives.
func TestLinkTypeRegistry(t *testing.T) {
	for _, c := range []struct {
		ours   pcap.LinkType
		theirs layers.LinkType
		name   string
	}{
		{pcap.LinkTypeNull, layers.LinkTypeNull, "Null"},
		{pcap.LinkTypeEthernet, layers.LinkTypeEthernet, "Ethernet"},
		{pcap.LinkTypeRaw, layers.LinkTypeRaw, "Raw"},
		{pcap.LinkTypeIEEE802_11, layers.LinkTypeIEEE802_11, "802.11"},
		{pcap.LinkTypeLoop, layers.LinkTypeLoop, "Loop"},
		{pcap.LinkTypeLinuxSLL, layers.LinkTypeLinuxSLL, "Linux SLL"},
		{pcap.LinkTypeIPv4, layers.LinkTypeIPv4, "IPv4"},
		{pcap.LinkTypeIPv6, layers.LinkTypeIPv6, "IPv6"},
		{pcap.LinkTypeLinuxSLL2, layers.LinkTypeLinuxSLL2, "Linux SLL2"},
		{pcap.LinkType(147), 147, "LinkType(147)"},
	} {
		if uint16(c.ours) != uint16(c.theirs) {
			t.Errorf("%s = %d, the registry says %d", c.name, uint16(c.ours), uint16(c.theirs))
		}
		if got := c.ours.String(); got != c.name {
			t.Errorf("LinkType(%d).String() = %q, want %q", uint16(c.ours), got, c.name)
		}
	}
}

// TestLinkTypeReadAndDecode writes a classic pcap file of link type Raw
// and checks the Reader reports that link type and the Decoder a
// LinkError (matching wire.ErrUnsupported) that names it.
func TestLinkTypeReadAndDecode(t *testing.T) {
	var buf bytes.Buffer
	w, err := pcap.NewPcapWriter(&buf, pcap.LinkTypeRaw, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WritePacket(time.Unix(1, 0), 0, []byte{0x60, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := pcap.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var recs int
	err = (&pcap.Decoder{}).Each(r, func(rec *pcap.Record) error {
		recs++
		var le *pcap.LinkError
		if !errors.As(rec.Err, &le) || le.LinkType != pcap.LinkTypeRaw || !errors.Is(rec.Err, wire.ErrUnsupported) {
			t.Errorf("Err = %v, want a LinkError for Raw matching wire.ErrUnsupported", rec.Err)
		}
		const want = "link type 101 (Raw): only Ethernet captures are decoded"
		if rec.Err != nil && rec.Err.Error() != want {
			t.Errorf("Err = %q, want %q", rec.Err, want)
		}
		return nil
	})
	if err != nil || recs != 1 {
		t.Fatalf("Each: %d records, %v", recs, err)
	}
	if got := r.LinkType(); got != pcap.LinkTypeRaw {
		t.Errorf("LinkType() = %v, want Raw", got)
	}
}

package conformance

import (
	"io"
	"net/netip"
	"testing"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// TestNodeAddrPairsAgree checks nodeAddr, which keeps the address pairs it
// named by their bytes (engine.pairs), against naming each address anew, frame
// by frame over captures of IPv4 and IPv6 frames (and frames of both in
// one capture, whose address bytes may agree in their first four).
func TestNodeAddrPairsAgree(t *testing.T) {
	n, v6 := 0, 0
	for _, name := range []string{"../pcap/testdata/valid.pcapng", "../pcap/testdata/scenarios/loss.pcapng", "../pcap/testdata/malformed.pcapng"} {
		r, err := pcap.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		p := DefaultPICS()
		e, ref := newEngine(p), newEngine(p)
		d := pcap.Decoder{Codec: p.Codec(), EVMode: p.EVModeValue()}
		for {
			var f pcap.Frame
			if err := r.Next(&f); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			ifs := r.Interfaces()
			var rec pcap.Record
			d.Decode(&f, &ifs[f.Interface], &rec)
			q := &rec.Packet
			src, dst, ok := e.nodeAddr(q)
			if _, udp, _ := q.Offsets(); udp == 0 {
				if ok {
					t.Fatalf("%s frame %d: named without a UDP header", name, f.Number)
				}
				continue
			}
			var ws, wd string
			if q.IsIPv6 {
				ws, wd = ref.node(netip.AddrFrom16(q.IP6.Src)), ref.node(netip.AddrFrom16(q.IP6.Dst))
				v6++
			} else {
				ws, wd = ref.node(netip.AddrFrom4(q.IP4.Src)), ref.node(netip.AddrFrom4(q.IP4.Dst))
			}
			if !ok || src != ws || dst != wd {
				t.Fatalf("%s frame %d: nodeAddr %q→%q (%v), named anew %q→%q", name, f.Number, src, dst, ok, ws, wd)
			}
			n++
			if n%50 == 0 {
				flipEachByte(t, e, ref, q)
			}
		}
		r.Close()
	}
	if n < 500 || v6 == 0 {
		t.Fatalf("%d frames named, %d IPv6: the test shows little", n, v6)
	}
}

// flipEachByte names packet q with each byte of its addresses changed in
// turn, alternating with q itself, by nodeAddr and anew.
func flipEachByte(t *testing.T, e, ref *engine, q *wire.Packet) {
	t.Helper()
	addrs := [][]byte{q.IP4.Src[:], q.IP4.Dst[:]}
	if q.IsIPv6 {
		addrs = [][]byte{q.IP6.Src[:], q.IP6.Dst[:]}
	}
	name := func(en *engine) (string, string) {
		if q.IsIPv6 {
			return en.node(netip.AddrFrom16(q.IP6.Src)), en.node(netip.AddrFrom16(q.IP6.Dst))
		}
		return en.node(netip.AddrFrom4(q.IP4.Src)), en.node(netip.AddrFrom4(q.IP4.Dst))
	}
	for _, a := range addrs {
		for i := range a {
			for range 2 {
				a[i] ^= 0x10
				src, dst, _ := e.nodeAddr(q)
				if ws, wd := name(ref); src != ws || dst != wd {
					t.Fatalf("address byte %d changed: nodeAddr %q→%q, named anew %q→%q", i, src, dst, ws, wd)
				}
			}
		}
	}
}

// TestNodeAddrV4AfterV6SameWord: an IPv4 pair and an IPv6 pair whose
// first key word (pairKey.a) agree, the IPv6 one's others zero, share a
// slot of engine.pairs; nodeAddr's IPv4 test compares a alone, and must
// tell the IPv6 pair kept there from the IPv4 one, and back.
func TestNodeAddrV4AfterV6SameWord(t *testing.T) {
	var q4, q6 *wire.Packet
	r, err := pcap.Open("../pcap/testdata/valid.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := DefaultPICS()
	d := pcap.Decoder{Codec: p.Codec(), EVMode: p.EVModeValue()}
	for q4 == nil || q6 == nil {
		var f pcap.Frame
		if err := r.Next(&f); err != nil {
			t.Fatalf("no IPv4 and IPv6 frames with UDP headers: %v", err)
		}
		ifs := r.Interfaces()
		var rec pcap.Record
		d.Decode(&f, &ifs[f.Interface], &rec)
		if _, udp, _ := rec.Packet.Offsets(); udp == 0 {
			continue
		}
		switch q := rec.Packet; {
		case q.IsIPv6 && q6 == nil:
			q6 = &q
		case !q.IsIPv6 && q4 == nil:
			q4 = &q
		}
	}
	q6.IP6.Src, q6.IP6.Dst = [16]byte{}, [16]byte{}
	copy(q6.IP6.Src[:], q4.IP4.Src[:])
	copy(q6.IP6.Src[4:], q4.IP4.Dst[:])
	e, ref := newEngine(p), newEngine(p)
	for _, q := range []*wire.Packet{q6, q4, q6, q4} {
		ws, wd := ref.node(netip.AddrFrom4(q.IP4.Src)), ref.node(netip.AddrFrom4(q.IP4.Dst))
		if q.IsIPv6 {
			ws, wd = ref.node(netip.AddrFrom16(q.IP6.Src)), ref.node(netip.AddrFrom16(q.IP6.Dst))
		}
		if src, dst, _ := e.nodeAddr(q); src != ws || dst != wd {
			t.Fatalf("IPv6 %v: nodeAddr %q→%q, named anew %q→%q", q.IsIPv6, src, dst, ws, wd)
		}
	}
}

package pcap_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// Read a capture (pcap or pcapng, gzip or not) frame by frame and decode
// each frame with the wire codec.
func ExampleDecoder_Each() {
	r, err := pcap.Open("testdata/valid.pcapng")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	d := &pcap.Decoder{}
	_ = d.Each(r, func(rec *pcap.Record) error {
		if rec.Number <= 3 {
			fmt.Println(rec.Number, rec.Iface.Name, rec.Packet.BTH.Opcode, rec.Packet.BTH.PSN, len(rec.Packet.Payload))
		}
		return nil
	})
	// Output:
	// 1 tx/plane0 RDMA_WRITE_FIRST 100 64
	// 2 tx/plane1 RDMA_WRITE_MIDDLE 101 64
	// 3 tx/plane2 RDMA_WRITE_LAST 102 30
}

// Print records the way mrc-conform decode does.
func ExamplePrinter() {
	r, err := pcap.Open("testdata/malformed.pcapng")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	d := &pcap.Decoder{}
	p := pcap.NewPrinter(os.Stdout, pcap.OutputText, nil, d.EVMode)
	_ = d.Each(r, func(rec *pcap.Record) error {
		if rec.Number == 6 || rec.Number == 15 {
			return p.Print(rec)
		}
		return nil
	})
	_ = p.Flush()
	// Output:
	//     6 0.000005000 tx/plane1        10.0.0.1 → 10.0.0.2       48 MALFORMED BTH@42 truncated: need 12 bytes, have 6 [WIRE-BTH-1]
	//    15 0.000014000 tx/plane0        10.0.0.1 → 10.0.0.2       94 ev=0x0000c0de RDMA_WRITE_ONLY       qp=0x000011 psn=200 msn=1 va=0x00007f0000000000 len=16 dma_len=16 [A] !WIRE-BTH-7
}

// Write a pcapng file with one interface per plane and a verdict comment
// on a packet, then read it back.
func ExampleNewWriter() {
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, pcap.Interface{Point: "nic-a", Plane: 0}, pcap.Interface{Point: "nic-a", Plane: 1})
	if err != nil {
		panic(err)
	}
	ts := time.Date(2026, 5, 5, 0, 0, 0, 0, time.UTC)
	_ = w.WritePacket(ts, 1, []byte{0xde, 0xad}, "verdict: WIRE-BTH-7 violated")
	_ = w.Flush()

	r, err := pcap.NewReader(&buf)
	if err != nil {
		panic(err)
	}
	var f pcap.Frame
	_ = r.Next(&f)
	in := r.Interface(f.Interface)
	fmt.Printf("%s plane %d: %d bytes, %q\n", in.Name, in.Plane, len(f.Data), f.Comments[0])
	// Output:
	// nic-a/plane1 plane 1: 2 bytes, "verdict: WIRE-BTH-7 violated"
}

// Summarise a capture per QP and per EV.
func ExampleStats() {
	r, err := pcap.Open("testdata/valid.pcapng")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	st := pcap.NewStats()
	d := &pcap.Decoder{}
	_ = d.Each(r, func(rec *pcap.Record) error { st.Add(rec); return nil })
	q := st.QPs[0x22]
	fmt.Println(q.SACKs, q.SACKHoles, q.NACKs[wire.NACKTrimmed])
	for _, tr := range st.EVs[0xc002].Transitions {
		fmt.Println(tr.From, "->", tr.To, "by", tr.Cause)
	}
	// Output:
	// 4 5 1
	// GOOD -> ASSUMED_BAD by SACK m=ALWAYS_SKIP
	// ASSUMED_BAD -> GOOD by SACK m=NONE
}

// Count the holes a SACK reports.
func ExampleSACKGaps() {
	s := wire.SETH{CACKPSN: 100, SACKBitmap: 0b1011_0010} // base 100: 101, 104, 105, 107 received
	fmt.Println(pcap.SACKGaps(&s))
	// Output:
	// 3 4
}

// Generate the Wireshark dissector for a profile.
func ExampleWriteLua() {
	var buf bytes.Buffer
	if err := pcap.WriteLua(&buf, wire.Default); err != nil {
		panic(err)
	}
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(l, "local PORTS") {
			fmt.Println(l)
		}
	}
	// Output:
	// local PORTS = {4791, 4971}
}

// Select frames with a display filter, as tshark -Y does, and show a bad
// expression's error.
func ExampleCompileFilter() {
	f, err := pcap.CompileFilter("mrc.bth.opcode == RELIABILITY_NACK && mrc.neth.nack_reason <= 2", nil)
	if err != nil {
		panic(err)
	}
	r, err := pcap.Open("testdata/valid.pcapng")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	var d pcap.Decoder
	var frames []int
	if err := d.Each(r, func(rec *pcap.Record) error {
		if f.Match(rec) {
			frames = append(frames, rec.Number)
		}
		return nil
	}); err != nil {
		panic(err)
	}
	fmt.Println(frames, f)
	_, err = pcap.CompileFilter("mrc.bth.pns == 5", nil)
	fmt.Println(err)
	fmt.Println(err.(*pcap.FilterError).Caret())
	// Output:
	// [22 23] mrc.bth.opcode == 221 && mrc.neth.nack_reason <= 2
	// filter column 1: unknown field: "mrc.bth.pns" is not a field; did you mean mrc.bth.psn?
	// mrc.bth.pns == 5
	// ^
}

// Keep frames without copying them, and come back to one later: a file
// Open opens retains its frames until they are released, and
// a Mark taken before a frame brings a Reader back to it.
func ExampleReader_Retain() {
	r, err := pcap.Open("testdata/valid.pcapng")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	fmt.Println("retains:", r.Retain())
	var kept []pcap.Frame // held by reference
	var third pcap.Mark
	var f pcap.Frame
	for r.Next(&f) == nil {
		if f.Number == 2 {
			third = r.Mark()
		}
		if f.Number <= 4 {
			kept = append(kept, f)
		}
	}
	fmt.Println("kept", len(kept), "frames; frame 1 still holds", len(kept[0].Data), "bytes")
	r.Release(kept[len(kept)-1].Offset) // frames before the last kept one are no longer used
	if r.Seek(third) && r.Next(&f) == nil {
		fmt.Println("back at frame", f.Number, "of", len(f.Data), "bytes")
	}
	// Output:
	// retains: true
	// kept 4 frames; frame 1 still holds 142 bytes
	// back at frame 3 of 110 bytes
}

// Measure frames' times from a start split once (the first frame's, say).
func ExampleEpoch() {
	e := pcap.NewEpoch(time.Unix(100, 500))
	fmt.Println(e.Since(time.Unix(101, 400)))
	// Output: 999.9999ms
}

// A Decoder with Cut decodes a frame the capture's snap length cut after
// its headers from them, and a Printer shows what the capture holds.
func ExampleDecoder_cut() {
	p := wire.Packet{}
	p.IP4 = wire.IPv4{TTL: 64, FlagsFrag: 0x4000}
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: 0x11, PSN: 42}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 7, DMALength: 1024}
	p.Payload = make([]byte, 1024)
	frame, err := wire.Default.Append(nil, &p)
	if err != nil {
		panic(err)
	}
	f := pcap.Frame{Number: 1, Length: len(frame), Data: frame[:128]}
	var r pcap.Record
	(&pcap.Decoder{Cut: true}).Decode(&f, nil, &r)
	fmt.Println(r.Cut, r.Captured(), len(r.Data), r.Err)
	pr := pcap.NewPrinter(os.Stdout, pcap.OutputText, nil, wire.EVModeSTEV)
	pr.Print(&r)
	pr.Flush()
	// Output:
	// true 128 1102 <nil>
	//     1 0.000000000 if0               0.0.0.0 → 0.0.0.0      1102 ev=0x00000000 RDMA_WRITE_ONLY       qp=0x000011 psn=42 msn=0 va=0x0000000000001000 len=1024 dma_len=1024 [cut by the snap length: 128 of 1102 bytes]
}

// Read a capture file mapped into memory, guarded against the file being
// cut short while it is read: the fault of touching a page past its new
// end becomes an error.
func ExampleOpenMapped() {
	r, err := pcap.OpenMapped("testdata/valid.pcapng")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	n := 0
	err = pcap.Guard(func() error {
		var f pcap.Frame
		for {
			switch err := r.Next(&f); err {
			case nil:
				n++
			case io.EOF:
				return nil
			default:
				return err
			}
		}
	})
	fmt.Println(n, err)
	// Output:
	// 32 <nil>
}

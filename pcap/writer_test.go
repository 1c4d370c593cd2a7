package pcap_test

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"pgregory.net/rapid"

	"github.com/openmrc/mrc/pcap"
)

// fataler is what the writers below need of a testing.TB or rapid.T.
type fataler interface{ Fatal(args ...any) }

// viaPcapgo writes ifaces and frames as pcapng with gopacket's
// independent writer, the way the Writer is specified: section
// application "openmrc", Point/Plane names, LinkType 0 as Ethernet,
// nanosecond timestamps, one opt_comment per comment.
func viaPcapgo(t fataler, ifaces []pcap.Interface, frames []pcap.Frame) []byte {
	var buf bytes.Buffer
	var ng *pcapgo.NgWriter
	for i, in := range ifaces {
		ngi := pcapgo.NgInterface{Name: in.Name, Description: in.Description,
			LinkType: layers.LinkType(in.LinkType), SnapLength: in.SnapLen, TimestampResolution: 9}
		if ngi.Name == "" && in.Point != "" {
			ngi.Name = pcap.InterfaceName(in.Point, in.Plane)
		}
		if ngi.LinkType == 0 {
			ngi.LinkType = layers.LinkTypeEthernet
		}
		var err error
		if i == 0 {
			ng, err = pcapgo.NewNgWriterInterface(&buf, ngi,
				pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "openmrc"}})
		} else {
			_, err = ng.AddInterface(ngi)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range frames {
		var cs []string
		for _, c := range f.Comments {
			cs = append(cs, string(c))
		}
		ci := gopacket.CaptureInfo{Timestamp: f.Timestamp, CaptureLength: len(f.Data),
			Length: max(f.Length, len(f.Data)), InterfaceIndex: f.Interface}
		if err := ng.WritePacketWithOptions(ci, f.Data, pcapgo.NgPacketOptions{Comments: cs}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ng.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// viaWriter writes the same with the Writer.
func viaWriter(t fataler, ifaces []pcap.Interface, frames []pcap.Frame) []byte {
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, ifaces...)
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		if err := w.WriteFrame(&frames[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// classicViaPcapgo and classicViaWriter write a classic nanosecond pcap
// file with gopacket's writer and with NewPcapWriter.
func classicViaPcapgo(t fataler, lt pcap.LinkType, snap uint32, frames []pcap.Frame) []byte {
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	w := pcapgo.NewWriterNanos(bw)
	if lt == 0 {
		lt = pcap.LinkTypeEthernet
	}
	if snap == 0 {
		snap = 262144
	}
	if err := w.WriteFileHeader(snap, layers.LinkType(lt)); err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		ci := gopacket.CaptureInfo{Timestamp: f.Timestamp, CaptureLength: len(f.Data), Length: max(f.Length, len(f.Data))}
		if err := w.WritePacket(ci, f.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func classicViaWriter(t fataler, lt pcap.LinkType, snap uint32, frames []pcap.Frame) []byte {
	var buf bytes.Buffer
	w, err := pcap.NewPcapWriter(&buf, lt, snap)
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		if err := w.WriteFrame(&frames[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// firstByteDiff returns the offset of the first differing byte.
func firstByteDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// writerFixture is a capture with every feature the Writer writes:
// names given and derived from Point/Plane, descriptions, link types 0,
// Ethernet and Raw, snap lengths, frames of every length mod 4, snapped
// frames, zero, one and several comments (empty and odd lengths),
// timestamps before 1970, at the epoch and past 2038.
func writerFixture() ([]pcap.Interface, []pcap.Frame) {
	ifaces := []pcap.Interface{
		{Point: "host1", Plane: 0},
		{Point: "host1", Plane: 3, Description: "plane 3 of host1", SnapLen: 9000},
		{Name: "eth7", Description: "odd description", LinkType: pcap.LinkTypeEthernet},
		{Name: "raw", LinkType: pcap.LinkTypeRaw, SnapLen: 65535},
		{Name: "abcd"}, // a name of exactly 4 bytes: no padding
	}
	var frames []pcap.Frame
	times := []time.Time{time.Unix(1700000000, 123456789), time.Unix(0, 0), time.Unix(-5, 7), time.Unix(1<<32+3, 999999999)}
	comments := [][][]byte{nil, {[]byte("MRC-LR-RTX-003 FAIL")}, {[]byte(""), []byte("abc"), []byte("abcd"), []byte("é")}}
	for n := range 9 {
		data := bytes.Repeat([]byte{byte(n + 1)}, n*7)
		f := pcap.Frame{Timestamp: times[n%len(times)], Interface: n % len(ifaces), Data: data,
			Comments: comments[n%len(comments)]}
		if n%4 == 1 {
			f.Length = len(data) + 100 // snapped
		}
		frames = append(frames, f)
	}
	return ifaces, frames
}

// TestWriterBytesMatchPcapgo writes the same interfaces and frames with
// the Writer and with gopacket's pcapgo and requires identical bytes:
// SHB, IDBs with names, descriptions and options, EPBs with comments.
func TestWriterBytesMatchPcapgo(t *testing.T) {
	ifaces, frames := writerFixture()
	want, got := viaPcapgo(t, ifaces, frames), viaWriter(t, ifaces, frames)
	if !bytes.Equal(got, want) {
		i := firstByteDiff(got, want)
		t.Fatalf("pcapng differs from pcapgo's at byte %d of %d/%d:\n got % x\nwant % x", i, len(got), len(want),
			got[i:min(i+32, len(got))], want[i:min(i+32, len(want))])
	}
	for _, c := range []struct {
		lt   pcap.LinkType
		snap uint32
	}{{0, 0}, {pcap.LinkTypeEthernet, 9000}, {pcap.LinkTypeRaw, 65535}} {
		for i := range frames {
			frames[i].Comments, frames[i].Interface = nil, 0
		}
		want, got := classicViaPcapgo(t, c.lt, c.snap, frames), classicViaWriter(t, c.lt, c.snap, frames)
		if !bytes.Equal(got, want) {
			i := firstByteDiff(got, want)
			t.Errorf("pcap (%v, snap %d) differs from pcapgo's at byte %d of %d/%d", c.lt, c.snap, i, len(got), len(want))
		}
	}
}

// TestWriterBytesMatchPcapgoRapid is TestWriterBytesMatchPcapgo over
// generated interfaces and frames.
func TestWriterBytesMatchPcapgoRapid(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nIf := rapid.IntRange(1, 4).Draw(rt, "interfaces")
		ifaces := make([]pcap.Interface, nIf)
		for i := range ifaces {
			ifaces[i] = pcap.Interface{
				Name:        rapid.StringMatching(`[a-z0-9/]{0,9}`).Draw(rt, "name"),
				Point:       rapid.StringMatching(`[a-z]{0,5}`).Draw(rt, "point"),
				Plane:       rapid.IntRange(-1, 7).Draw(rt, "plane"),
				Description: rapid.StringMatching(`[ -~]{0,11}`).Draw(rt, "description"),
				LinkType:    pcap.LinkType(rapid.SampledFrom([]int{0, 1, 101, 276}).Draw(rt, "linktype")),
				SnapLen:     rapid.SampledFrom([]uint32{0, 64, 262144}).Draw(rt, "snaplen"),
			}
		}
		frames := make([]pcap.Frame, rapid.IntRange(0, 6).Draw(rt, "frames"))
		for i := range frames {
			f := &frames[i]
			f.Interface = rapid.IntRange(0, nIf-1).Draw(rt, "iface")
			f.Timestamp = time.Unix(rapid.Int64Range(-1<<33, 1<<33).Draw(rt, "sec"), rapid.Int64Range(0, 999999999).Draw(rt, "nsec"))
			f.Data = rapid.SliceOfN(rapid.Byte(), 0, 70).Draw(rt, "data")
			f.Length = rapid.IntRange(0, 200).Draw(rt, "length")
			for range rapid.IntRange(0, 3).Draw(rt, "comments") {
				f.Comments = append(f.Comments, []byte(rapid.String().Draw(rt, "comment")))
			}
		}
		if got, want := viaWriter(rt, ifaces, frames), viaPcapgo(rt, ifaces, frames); !bytes.Equal(got, want) {
			rt.Fatalf("pcapng differs from pcapgo's at byte %d of %d/%d", firstByteDiff(got, want), len(got), len(want))
		}
		for i := range frames {
			frames[i].Comments, frames[i].Interface = nil, 0
		}
		lt, snap := ifaces[0].LinkType, ifaces[0].SnapLen
		if got, want := classicViaWriter(rt, lt, snap, frames), classicViaPcapgo(rt, lt, snap, frames); !bytes.Equal(got, want) {
			rt.Fatalf("pcap differs from pcapgo's at byte %d of %d/%d", firstByteDiff(got, want), len(got), len(want))
		}
	})
}

// TestWriterErrors checks the Writer's refusals: no interfaces, a frame
// on an undeclared interface, comments in a classic pcap file, and
// values longer than a pcapng option can hold (65535 bytes).
func TestWriterErrors(t *testing.T) {
	if _, err := pcap.NewWriter(&bytes.Buffer{}); err == nil {
		t.Error("NewWriter with no interface: no error")
	}
	long := strings.Repeat("x", 1<<16)
	if _, err := pcap.NewWriter(&bytes.Buffer{}, pcap.Interface{Name: long}); err == nil {
		t.Error("NewWriter with a 65536-byte name: no error")
	}
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, pcap.Interface{Name: "a"}, pcap.Interface{Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	for _, iface := range []int{-1, 2} {
		if err := w.WritePacket(time.Unix(1, 0), iface, []byte{1}); err == nil || !strings.Contains(err.Error(), "declares 2") {
			t.Errorf("frame on interface %d: err %v", iface, err)
		}
	}
	if err := w.WritePacket(time.Unix(1, 0), 1, []byte{1}, strings.Repeat("c", 1<<16-1)); err != nil {
		t.Errorf("a 65535-byte comment: %v", err)
	}
	if err := w.WritePacket(time.Unix(1, 0), 1, []byte{1}, long); err == nil || !strings.Contains(err.Error(), "65536 bytes") {
		t.Errorf("a 65536-byte comment: err %v", err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := pcap.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var f pcap.Frame
	if err := r.Next(&f); err != nil || f.Interface != 1 || len(f.Comments) != 1 || len(f.Comments[0]) != 1<<16-1 {
		t.Errorf("reading back the 65535-byte comment: %v, interface %d, %d comments", err, f.Interface, len(f.Comments))
	}
	if err := r.Next(&f); err == nil {
		t.Errorf("a second frame was written (interface %d)", f.Interface)
	}
	pw, err := pcap.NewPcapWriter(&bytes.Buffer{}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := pw.WritePacket(time.Unix(1, 0), 0, []byte{1}, "c"); !errors.Is(err, pcap.ErrNoComments) {
		t.Errorf("comment in classic pcap: err %v, want ErrNoComments", err)
	}
	if err := pw.WriteFrame(&pcap.Frame{Data: []byte{1}, Comments: [][]byte{{'c'}}}); !errors.Is(err, pcap.ErrNoComments) {
		t.Errorf("frame with a comment in classic pcap: err %v, want ErrNoComments", err)
	}
}

// TestPcapWriterZeroTimestamp checks that a classic pcap frame with a
// zero timestamp is written with the time of writing.
func TestPcapWriterZeroTimestamp(t *testing.T) {
	var buf bytes.Buffer
	w, err := pcap.NewPcapWriter(&buf, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if err := w.WriteFrame(&pcap.Frame{Data: []byte{1, 2}}); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := pcap.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var f pcap.Frame
	if err := r.Next(&f); err != nil {
		t.Fatal(err)
	}
	if f.Timestamp.Before(before.Truncate(time.Second)) || f.Timestamp.After(after) {
		t.Errorf("timestamp %v, written between %v and %v", f.Timestamp, before, after)
	}
}

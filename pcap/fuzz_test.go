package pcap

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// readerSlack is what reading any capture may allocate beyond its bytes:
// the Reader itself, its first buffer (shrunk to 4 KiB under FuzzReader so
// that small inputs exercise the growth path), a gzip decompressor's window
// and tables (about 300 KiB), the interface list and error values.
const readerSlack = 512 << 10

// FuzzReader feeds arbitrary bytes to the capture reader (pcap, pcapng,
// gzip) and decodes what it yields. It must fail cleanly, never panic,
// and never allocate in proportion to a length field: the bytes the
// Reader allocates while reading the whole input (measured with
// runtime.MemStats) stay within 4 × the input's (decompressed) length
// plus readerSlack, whatever its length fields say (a 40-byte pcap
// record header may claim 4 MiB). Inputs are
// capped at 64 KiB: minimizing larger ones stalls the engine (fuzz with
// -fuzzminimizetime 1x, as scripts/test.sh does). It is an internal test
// (package pcap): the libFuzzer build (go-118-fuzz-build) cannot build a
// target of an external test package.
func FuzzReader(f *testing.F) {
	for _, name := range []string{"valid.pcapng", "malformed.pcapng"} {
		for _, b := range readerSeeds(f, name) {
			f.Add(b)
		}
	}
	f.Add(statisticsSeed(f))
	defer SetChunkSize(4 << 10)()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		n := inputLen(data)
		alloc := readerAlloc(data)
		if limit := 4*uint64(n) + readerSlack; alloc > limit {
			t.Fatalf("reading %d bytes (%d decompressed) allocated %d bytes, more than %d: a length field drives allocation",
				len(data), n, alloc, limit)
		}
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			var fe *FormatError
			if !errors.Is(err, ErrUnknownFormat) && !errors.As(err, &fe) {
				t.Fatalf("NewReader: untyped error %T %v", err, err)
			}
			return
		}
		var d Decoder
		p := NewPrinter(io.Discard, OutputJSON, nil, 0)
		st := NewStats()
		var fr Frame
		var rec Record
		for i := 0; i < 1000; i++ {
			if err := r.Next(&fr); err != nil {
				return
			}
			d.Decode(&fr, r.Interface(fr.Interface), &rec)
			_ = p.Print(&rec)
			st.Add(&rec)
		}
	})
}

// readerSeeds returns FuzzReader's seeds made from the corpus capture
// testdata/name: the capture, gzipped, cut in half, and its frames written
// as classic pcap.
func readerSeeds(f *testing.F, name string) [][]byte {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		f.Fatal(err)
		return nil // the libFuzzer build runs away from testdata, and its Fatal returns
	}
	var z, p bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, err1 := zw.Write(b)
	err2 := zw.Close()
	r, err3 := NewReader(bytes.NewReader(b))
	w, err4 := NewPcapWriter(&p, LinkTypeEthernet, 0)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		f.Fatal(err)
		return nil
	}
	var fr Frame
	for r.Next(&fr) == nil {
		if err := w.WriteFrame(&Frame{Timestamp: fr.Timestamp, Length: fr.Length, Data: fr.Data}); err != nil {
			f.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Fatal(err)
	}
	return [][]byte{b, z.Bytes(), b[:len(b)/2], p.Bytes()}
}

// readerAlloc returns the bytes allocated while opening data and reading
// every frame of it.
func readerAlloc(data []byte) uint64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	if r, err := NewReader(bytes.NewReader(data)); err == nil {
		var fr Frame
		for r.Next(&fr) == nil {
		}
	}
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// inputLen is the length of data, or of its decompressed content when it
// is gzip (up to 64 MiB).
func inputLen(data []byte) int {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return len(data)
	}
	zr.Multistream(true)
	n, _ := io.Copy(io.Discard, io.LimitReader(zr, 64<<20))
	return max(len(data), int(n))
}

// TestPrinterExtremeTimes prints frames whose times are as far apart as
// time.Duration allows, and checks the JSON stays valid.
func TestPrinterExtremeTimes(t *testing.T) {
	var d Decoder
	var out bytes.Buffer
	p := NewPrinter(&out, OutputJSON, nil, 0)
	for _, ts := range []time.Time{time.Unix(1<<40, 0), time.Unix(-1<<40, 0), time.Unix(0, 0)} {
		var r Record
		d.Decode(&Frame{Timestamp: ts, Data: []byte{1, 2, 3}}, nil, &r)
		if err := p.Print(&r); err != nil {
			t.Fatal(err)
		}
	}
	_ = p.Flush()
	for _, l := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		if !json.Valid(l) {
			t.Errorf("invalid JSON: %s", l)
		}
	}
}

// statisticsSeed is a pcapng capture with interface statistics blocks
// (Writer.WriteDropped) between and after its frames.
func statisticsSeed(f *testing.F) []byte {
	var b bytes.Buffer
	w, err := NewWriter(&b, Interface{Point: "p", Plane: 0}, Interface{Point: "p", Plane: 1})
	if err != nil {
		f.Fatal(err)
	}
	ts := time.Unix(1700000000, 0)
	err = errors.Join(w.WritePacket(ts, 0, make([]byte, 60)), w.WriteDropped(ts, 1, 3),
		w.WritePacket(ts, 1, make([]byte, 60)), w.WriteDropped(ts, 0, 0), w.WriteDropped(ts, 1, 5), w.Flush())
	if err != nil {
		f.Fatal(err)
	}
	return b.Bytes()
}

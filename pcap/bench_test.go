package pcap_test

import (
	"bytes"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openmrc/mrc/internal/testenv"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

func TestFieldKeysFound(t *testing.T) {
	if err := pcap.DefaultKeysErr(); err != nil {
		t.Fatal(err)
	}
}

// benchCapture returns a pcapng of n frames cycling through the valid
// corpus (all opcodes, 14 to 80-byte payloads: a header-dominated
// capture like a snapped one), or, when payload > 0, of RDMA_WRITE_MIDDLE
// frames carrying that many payload bytes.
func benchCapture(tb testing.TB, n, payload int) []byte {
	frames, _ := readAll(tb, corpusFile(tb, "valid.pcapng"))
	if payload > 0 {
		p := &wire.Packet{}
		p.IP4.FlagsFrag = 0x4000
		p.BTH = wire.BTH{Opcode: wire.OpWriteMiddle, DestQP: 0x11}
		p.RETH.DMALength = 1 << 20
		p.Payload = make([]byte, payload)
		f, err := wire.Default.Append(nil, p)
		if err != nil {
			tb.Fatal(err)
		}
		frames = []frameCopy{{Data: f}}
	}
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, pcap.Interface{Point: "tx", Plane: 0}, pcap.Interface{Point: "tx", Plane: 1})
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Date(2026, 5, 5, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		if err := w.WritePacket(t0.Add(time.Duration(i)*100*time.Nanosecond), i%2, frames[i%len(frames)].Data); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkReadDecode measures frames per second per core through the
// library: reading a pcapng from memory, then decoding with and without
// the strict checks (which include the ICRC), and printing JSON. One op
// is one frame. Reading copies each frame from the in-memory file (20,000
// frames, 80 MiB for 4 KiB writes: not in any cache) into the Reader's
// buffer, as reading a capture file does; cpu-ns/frame is the CPU
// time, which a loaded machine does not inflate as it does ns/op.
func BenchmarkReadDecode(b *testing.B) {
	for _, size := range []struct {
		name    string
		payload int
	}{{"mix", 0}, {"4KiB", 4096}} {
		data := benchCapture(b, 20000, size.payload)
		for _, stage := range []string{"read", "decode", "decode+check", "json"} {
			b.Run(size.name+"/"+stage, func(b *testing.B) {
				br := bytes.NewReader(data)
				r, err := pcap.NewReader(br)
				if err != nil {
					b.Fatal(err)
				}
				d := &pcap.Decoder{NoCheck: stage == "decode"}
				p := pcap.NewPrinter(io.Discard, pcap.OutputJSON, nil, 0)
				var f pcap.Frame
				var rec pcap.Record
				b.ReportAllocs()
				b.SetBytes(int64(len(data) / 20000))
				b.ResetTimer()
				start, cpu0 := time.Now(), testenv.CPUTime()
				for i := 0; i < b.N; i++ {
					if err := r.Next(&f); err != nil {
						if err != io.EOF {
							b.Fatal(err)
						}
						br.Reset(data)
						if r, err = pcap.NewReader(br); err != nil {
							b.Fatal(err)
						}
						if err := r.Next(&f); err != nil {
							b.Fatal(err)
						}
					}
					if stage == "read" {
						continue
					}
					d.Decode(&f, r.Interface(f.Interface), &rec)
					if stage == "json" {
						_ = p.Print(&rec)
					}
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "frames/s")
				// CPU time per frame: a loaded machine inflates wall time.
				b.ReportMetric(float64((testenv.CPUTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/frame")
			})
		}
	}
}

// BenchmarkReadFile measures reading a capture file in the page cache
// (20,000 4 KiB writes, 80 MiB) as Open reads it (copied into chunks)
// and as OpenMapped does (mapped), touching every byte of every frame
// as the ICRC check does (a CRC-32 of it). One op is the whole file;
// cpu-ms/op is its CPU time.
func BenchmarkReadFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "writes.pcapng")
	if err := os.WriteFile(path, benchCapture(b, 20000, 4096), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, open := range []struct {
		name string
		fn   func(string) (*pcap.Reader, error)
	}{{"Open", pcap.Open}, {"OpenMapped", pcap.OpenMapped}} {
		b.Run(open.name, func(b *testing.B) {
			var sum uint32
			cpu0 := testenv.CPUTime()
			for i := 0; i < b.N; i++ {
				r, err := open.fn(path)
				if err != nil {
					b.Fatal(err)
				}
				var f pcap.Frame
				for r.Next(&f) == nil {
					sum = crc32.Update(sum, crc32.IEEETable, f.Data)
				}
				r.Close()
			}
			b.ReportMetric(float64((testenv.CPUTime()-cpu0).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
			_ = sum
		})
	}
}

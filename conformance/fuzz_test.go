package conformance

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/openmrc/mrc/conformance/internal/capgen"
	"github.com/openmrc/mrc/pcap"
)

// fataler is what a seed helper needs of its *testing.T, B or F; not
// testing.TB, which the *testing.F of the libFuzzer build
// (go-118-fuzz-build, .clusterfuzzlite/build.sh) does not implement.
type fataler interface{ Fatal(args ...any) }

// framesInput encodes up to max frames of a capture as fuzz input:
// [interface byte][time step byte][length uint16][frame] repeated.
func framesInput(t fataler, name string, max int) []byte {
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
		return nil // the libFuzzer build's Fatal returns
	}
	r, err := pcap.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
		return nil
	}
	var out []byte
	var f pcap.Frame
	for i := 0; i < max; i++ {
		if r.Next(&f) != nil {
			break
		}
		out = append(out, byte(f.Interface), 1)
		out = binary.BigEndian.AppendUint16(out, uint16(len(f.Data)))
		out = append(out, f.Data...)
	}
	return out
}

// captureFromFrames turns input in the framesInput encoding into a pcapng
// with the testdata's four interfaces. A time step byte of 0 moves the
// clock backwards, so untrusted timestamps are fuzzed too. The ICRC of a
// frame that decodes is recomputed unless bit 7 of its interface byte is
// set: a mutated frame almost never keeps a valid ICRC, and the judge
// looks no further into a frame whose ICRC is wrong.
func captureFromFrames(data []byte) []byte {
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, capgen.Interfaces()...)
	if err != nil {
		panic(err)
	}
	ts := capgen.Start.Add(time.Second)
	for len(data) >= 4 {
		ifc, step := int(data[0])%4, time.Duration(data[1])
		n := min(int(binary.BigEndian.Uint16(data[2:])), len(data)-4)
		if step == 0 {
			ts = ts.Add(-time.Microsecond)
		} else {
			ts = ts.Add(step * 300 * time.Nanosecond)
		}
		frame := data[4 : 4+n]
		if data[0]&0x80 == 0 {
			frame = bytes.Clone(frame)
			_ = pcap.SetICRC(nil, frame)
		}
		_ = w.WritePacket(ts, ifc, frame)
		data = data[4+n:]
	}
	_ = w.Flush()
	return buf.Bytes()
}

// judgeBytes judges a capture held in memory and renders every format; it
// fails on a tester fault (a panic inside the judge).
func judgeBytes(t *testing.T, capture []byte, p *PICS) {
	r, err := pcap.NewReader(bytes.NewReader(capture))
	if err != nil {
		return
	}
	rep, err := Judge(r, "fuzz", Options{PICS: p, Today: testDay})
	var ie *InternalError
	if errors.As(err, &ie) {
		t.Fatal(ie)
	}
	if err != nil {
		return
	}
	for _, f := range Formats {
		if err := rep.Write(io.Discard, f); err != nil {
			t.Fatal(err)
		}
	}
	if rep.Summary.Errors != 0 {
		t.Fatalf("ERROR verdicts: %+v", rep.Summary)
	}
}

// maxFuzzInput bounds the fuzz inputs judged.
const maxFuzzInput = 32 << 10

// fuzzPICS is the reference PICS FuzzJudge judges with, embedded: the
// libFuzzer build (.clusterfuzzlite/build.sh) runs away from the source
// tree, where testdata cannot be read.
//
//go:embed testdata/reference.pics.json
var fuzzPICS []byte

// FuzzJudge feeds the judge arbitrary captures (when the input starts like
// a pcap, pcapng or gzip file) and arbitrary frames on the testdata's
// interfaces (otherwise). The judge must never panic, whatever the input,
// and its state stays bounded (TestStateBounded). The seed corpus, which
// plain go test runs, is every testdata capture whole and as frames.
// Fuzz with -fuzzminimizetime 1x: minimizing large captures stalls the
// engine for minutes.
func FuzzJudge(f *testing.F) {
	for _, fault := range capgen.Faults {
		name := "testdata/" + capgen.FileName(fault)
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
			continue // the libFuzzer build's Fatal returns, and its Add ignores seeds
		}
		if len(b) <= maxFuzzInput {
			f.Add(b)
		}
		f.Add(framesInput(f, name, 60))
	}
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x0d, 0x0d, 0x0a})
	pics, err := ParsePICS(fuzzPICS)
	if err != nil {
		f.Fatal(err)
	}
	def := DefaultPICS()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzInput {
			return // large inputs only slow the fuzzer down; the seeds cover whole captures
		}
		capture := data
		if len(data) < 4 || !(bytes.HasPrefix(data, []byte{0x0a, 0x0d, 0x0d, 0x0a}) || bytes.HasPrefix(data, []byte{0xd4, 0xc3, 0xb2, 0xa1}) ||
			bytes.HasPrefix(data, []byte{0xa1, 0xb2, 0xc3, 0xd4}) || bytes.HasPrefix(data, []byte{0x4d, 0x3c, 0xb2, 0xa1}) || bytes.HasPrefix(data, []byte{0x1f, 0x8b})) {
			capture = captureFromFrames(data)
		}
		judgeBytes(t, capture, pics)
		if len(data)%2 == 0 {
			judgeBytes(t, capture, def)
		}
	})
}

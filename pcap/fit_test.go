package pcap_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/internal/emuclient"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// emuCapture writes frames into an in-memory pcapng file.
func emuCapture(t *testing.T, frames [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, pcap.Interface{Name: "plane0"})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range frames {
		if err := w.WritePacket(time.Unix(0, int64(i)*1000), 0, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func fitOf(t *testing.T, capture []byte, c *wire.Codec) *pcap.Fit {
	t.Helper()
	r, err := pcap.NewReader(bytes.NewReader(capture))
	if err != nil {
		t.Fatal(err)
	}
	d := &pcap.Decoder{Codec: c, EVMode: wire.EVModeSTEV}
	f := pcap.NewFit(c, wire.EVModeSTEV)
	if err := d.Each(r, func(rec *pcap.Record) error { f.Add(rec); return nil }); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFitSuggestsEmu: an emulator capture decoded under the default
// profile is said to fit the emu preset better, for its ICRC and its EV
// halves; decoded under the emu preset, nothing is said.
func TestFitSuggestsEmu(t *testing.T) {
	emu, frames := emuSession(t)
	capture := emuCapture(t, frames)
	adv := fitOf(t, capture, wire.Default).Advice()
	if len(adv) != 1 || !strings.Contains(adv[0], "--profile emu") ||
		!strings.Contains(adv[0], "29 frames carry ICRC errors that the emu preset accepts") || !strings.Contains(adv[0], "EV halves look swapped") {
		t.Errorf("advice under the default profile: %q", adv)
	}
	if adv := fitOf(t, capture, emu).Advice(); len(adv) != 0 {
		t.Errorf("advice under the emu preset: %q", adv)
	}
}

// TestFitNeedsEvidence: a capture of the default profile's own frames, or
// one with too few echoes, draws no claim of swapped halves.
func TestFitNeedsEvidence(t *testing.T) {
	few := emuCapture(t, emuclient.Session(emuclient.HostA, emuclient.HostB, 2)) // 2 SACKs and a NACK: below the minimum
	if f := fitOf(t, few, wire.Default); f.HalvesSwapped() {
		t.Error("three echoes were taken as evidence of swapped halves")
	}
	frames := defaultFrames(t, 8)
	if adv := fitOf(t, emuCapture(t, frames), wire.Default).Advice(); len(adv) != 0 {
		t.Errorf("the default profile's own frames drew advice: %q", adv)
	}
}

// defaultFrames returns n RDMA WRITE frames of the default profile, with
// EVs in STEV mode.
func defaultFrames(t *testing.T, n int) [][]byte {
	t.Helper()
	return writeFrames(t, wire.Default, n)
}

// writeFrames returns n RDMA WRITE frames encoded by c, with EVs in STEV
// mode.
func writeFrames(t *testing.T, c *wire.Codec, n int) [][]byte {
	t.Helper()
	var frames [][]byte
	for i := range n {
		p := &wire.Packet{IsIPv6: true}
		p.IP6.Src, p.IP6.Dst = emuclient.HostA.IP.As16(), emuclient.HostB.IP.As16()
		p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN, p.BTH.PKey = wire.OpWriteOnly, 0x22, uint32(i), 0xFFFF
		p.RETH.DMALength = 64
		p.Payload = make([]byte, 64)
		c.SetEV(p, 0x00010002+uint32(i), wire.EVModeSTEV)
		b, err := c.Append(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, b)
	}
	return frames
}

// TestAdviseFileAsFit: AdviseFile, which decodes the other presets only
// once a frame fits the selected profile badly, advises as a Fit fed every
// frame does: on an emulator capture under the default profile and under
// its own, on the default profile's frames, and on the default profile's
// frames followed by an emulator session (its frames found wrong only
// after clean ones), and on the emu preset's writes (their ICRC alone is
// wrong under the default profile).
func TestAdviseFileAsFit(t *testing.T) {
	emu, session := emuSession(t)
	for _, c := range []struct {
		name   string
		frames [][]byte
		codec  *wire.Codec
		advice bool
	}{
		{"emu session, default profile", session, wire.Default, true},
		{"emu session, emu preset", session, emu, false},
		{"default frames", defaultFrames(t, 8), wire.Default, false},
		{"default frames then emu session", append(defaultFrames(t, 8), session...), wire.Default, true},
		{"emu preset's writes, default profile", writeFrames(t, emu, 8), wire.Default, true},
	} {
		capture := emuCapture(t, c.frames)
		name := filepath.Join(t.TempDir(), "c.pcapng")
		if err := os.WriteFile(name, capture, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := pcap.AdviseFile(name, c.codec, wire.EVModeSTEV)
		want := fitOf(t, capture, c.codec).Advice()
		if err != nil || !slices.Equal(got, want) || (len(got) > 0) != c.advice {
			t.Errorf("%s: AdviseFile %q, %v; Fit %q", c.name, got, err, want)
		}
	}
}

// BenchmarkFit measures what pcap.Fit adds to decode --stats and judge:
// one op is one frame decoded and checked, with and without Fit.Add (which
// decodes and checks it again under each other preset), side by side.
func BenchmarkFit(b *testing.B) {
	frames := emuclient.Session(emuclient.HostA, emuclient.HostB, 64)
	for _, withFit := range []bool{false, true} {
		name := map[bool]string{false: "decode+check", true: "decode+check+fit"}[withFit]
		b.Run(name, func(b *testing.B) {
			d := &pcap.Decoder{}
			f := pcap.NewFit(nil, wire.EVModeSTEV)
			var rec pcap.Record
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				fr := pcap.Frame{Number: i + 1, Data: frames[i%len(frames)]}
				d.Decode(&fr, nil, &rec)
				if withFit {
					f.Add(&rec)
				}
			}
		})
	}
}

// TestFitAltsOnFirstUse: a Fit makes the other presets' codecs only when
// a record is compared under them or Advice names one, and advises as a
// Fit that made them at once, whether fed as AdviseFile's first pass
// (AddSelected) or every record (Add): on captures with swapped EV halves
// and wrong ICRCs, with the emu preset's ICRC only, and that fit.
func TestFitAltsOnFirstUse(t *testing.T) {
	emu, session := emuSession(t)
	for _, c := range []struct {
		name  string
		cap   []byte
		codec *wire.Codec
		fits  bool // the first pass finds nothing that names another preset
	}{
		{"emu session, default profile", emuCapture(t, session), wire.Default, false},
		{"emu session, emu preset", emuCapture(t, session), emu, true},
		{"default frames", emuCapture(t, defaultFrames(t, 8)), wire.Default, true},
		{"emu preset's writes, default profile", emuCapture(t, writeFrames(t, emu, 8)), wire.Default, false},
	} {
		for _, firstPass := range []bool{true, false} {
			lazy, eager := pcap.NewFit(c.codec, wire.EVModeSTEV), pcap.NewFitEager(c.codec, wire.EVModeSTEV)
			r, err := pcap.NewReader(bytes.NewReader(c.cap))
			if err != nil {
				t.Fatal(err)
			}
			d := &pcap.Decoder{Codec: c.codec, EVMode: wire.EVModeSTEV}
			err = d.Each(r, func(rec *pcap.Record) error {
				if firstPass {
					lazy.AddSelected(rec)
					eager.AddSelected(rec)
				} else {
					lazy.Add(rec)
					eager.Add(rec)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			got, want := lazy.Advice(), eager.Advice()
			if !slices.Equal(got, want) {
				t.Errorf("%s, first pass %v: advice %q, made at once %q", c.name, firstPass, got, want)
			}
			if made := !(firstPass && c.fits); lazy.AltsMade() != made {
				t.Errorf("%s, first pass %v: other presets' codecs made: %v", c.name, firstPass, lazy.AltsMade())
			}
		}
	}
}

// emuSession returns the emu preset's codec and an emulator session of 12
// writes between its two hosts.
func emuSession(t *testing.T) (*wire.Codec, [][]byte) {
	t.Helper()
	emu, err := wire.NewCodec(spec.EmuProfile())
	if err != nil {
		t.Fatal(err)
	}
	return emu, emuclient.Session(emuclient.HostA, emuclient.HostB, 12)
}

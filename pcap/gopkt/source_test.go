package gopkt_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/pcap/gopkt"
)

// TestReadPacketData checks the Source as a gopacket PacketDataSource:
// the same frames, lengths, timestamps and interfaces as Next, copies
// that later reads do not overwrite, io.EOF at the end, and a
// *FormatError for a capture cut inside a block.
func TestReadPacketData(t *testing.T) {
	name := filepath.Join("..", "testdata", "malformed.pcapng")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	next, err := pcap.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	sr, err := pcap.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	src := gopkt.NewSource(sr)
	var kept [][]byte
	var frames [][]byte
	for {
		var f pcap.Frame
		errN := next.Next(&f)
		data, ci, errS := src.ReadPacketData()
		if errN != nil || errS != nil {
			if errN != io.EOF || errS != io.EOF {
				t.Fatalf("Next: %v, ReadPacketData: %v; want io.EOF from both", errN, errS)
			}
			break
		}
		if !bytes.Equal(data, f.Data) || ci.CaptureLength != len(f.Data) || ci.Length != f.Length ||
			!ci.Timestamp.Equal(f.Timestamp) || ci.InterfaceIndex != f.Interface {
			t.Fatalf("frame %d: ReadPacketData %v, Next %+v", f.Number, ci, f)
		}
		kept = append(kept, data)
		frames = append(frames, bytes.Clone(f.Data))
	}
	for i := range kept {
		if !bytes.Equal(kept[i], frames[i]) {
			t.Fatalf("frame %d changed after later reads: ReadPacketData must return a copy", i+1)
		}
	}
	cr, err := pcap.NewReader(bytes.NewReader(b[:len(b)-7]))
	if err != nil {
		t.Fatal(err)
	}
	cut := gopkt.NewSource(cr)
	for {
		_, _, err := cut.ReadPacketData()
		var fe *pcap.FormatError
		if errors.As(err, &fe) {
			break
		}
		if err != nil {
			t.Fatalf("a capture cut short: %v, want a *FormatError", err)
		}
	}
}

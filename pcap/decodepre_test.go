package pcap

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/openmrc/mrc/wire"
)

// TestDecodePreIsDecode (WIRE-ICRC-1): a frame decoded with its ICRC
// computed ahead (DecodePre with wire.Codec.PreICRC) gives the Record
// Decode gives, on every frame of the corpus and scenario captures, and
// on each with a payload byte flipped (a bad ICRC: ICRCOK false and the
// same violations either way).
func TestDecodePreIsDecode(t *testing.T) {
	files, _ := filepath.Glob("testdata/scenarios/*.pcapng")
	files = append(files, "testdata/valid.pcapng", "testdata/malformed.pcapng")
	var plain, pre Decoder
	var ps wire.PreScratch
	var a, b Record
	frames, ahead, bad := 0, 0, 0
	for _, name := range files {
		r, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		plain.Reset()
		pre.Reset()
		var f Frame
		for r.Next(&f) == nil {
			in := r.Interface(f.Interface)
			for _, flip := range []bool{false, true} {
				g := f
				if flip {
					if len(f.Data) < 80 {
						continue
					}
					g.Data = append([]byte(nil), f.Data...)
					g.Data[len(g.Data)-8] ^= 0x40
				}
				p := wire.Default.PreICRC(g.Data, &ps)
				if p.Computed() {
					ahead++
				}
				plain.Decode(&g, in, &a)
				pre.DecodePre(&g, in, &b, p)
				if a.ICRCOK != b.ICRCOK || a.Err != b.Err && (a.Err == nil || b.Err == nil || a.Err.Error() != b.Err.Error()) ||
					!reflect.DeepEqual(a.Violations, b.Violations) || !reflect.DeepEqual(a.Packet, b.Packet) {
					t.Fatalf("%s frame %d (flipped %v): DecodePre ICRCOK %v, %v, %v; Decode %v, %v, %v",
						name, f.Number, flip, b.ICRCOK, b.Err, b.Violations, a.ICRCOK, a.Err, a.Violations)
				}
				frames++
				if flip && p.Computed() && !b.ICRCOK {
					bad++
				}
			}
		}
		r.Close()
	}
	if frames < 1000 || ahead < frames/4 || bad == 0 {
		t.Fatalf("%d frames, %d with an ICRC computed ahead, %d with a bad ICRC computed ahead", frames, ahead, bad)
	}
	t.Logf("%d frames, %d with an ICRC computed ahead, %d with a bad ICRC computed ahead", frames, ahead, bad)
}

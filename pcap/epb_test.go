package pcap

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestNextEPBIsNextNG: Next, which reads a well-formed little-endian
// enhanced packet block through nextEPB, yields the same frames and the
// same error, at the same place, as nextNG alone, on the two corpus
// captures and on thousands of seeded mutations of them (bytes changed
// anywhere: block headers, lengths, interface IDs, option lists), read in
// small chunks so that blocks also straddle them.
func TestNextEPBIsNextNG(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	defer SetChunkSize(512)()
	var inputs [][]byte
	for _, name := range []string{"valid.pcapng", "malformed.pcapng"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	fast := 0
	for i := range 4000 {
		b := slices.Clone(inputs[i%len(inputs)])
		if i >= len(inputs) {
			for range 1 + rng.IntN(4) {
				at := rng.IntN(len(b))
				switch rng.IntN(3) {
				case 0:
					b[at] = byte(rng.Uint32())
				case 1:
					b[at] ^= 1 << rng.IntN(8)
				default:
					b[at] = []byte{0, 1, 3, 4, 6, 0xff}[rng.IntN(6)]
				}
			}
		}
		fast += sameFrames(t, seed, i, b)
	}
	if fast == 0 {
		t.Fatalf("seed %d: no frame was read by nextEPB", seed)
	}
}

// sameFrames reads b with Next and with nextNG and fails the test where
// they differ; it returns the frames nextEPB read.
func sameFrames(t *testing.T, seed uint64, i int, b []byte) (fast int) {
	t.Helper()
	a, errA := NewReader(bytes.NewReader(b))
	g, errG := NewReader(bytes.NewReader(b))
	if (errA == nil) != (errG == nil) {
		t.Fatalf("seed %d input %d: NewReader %v and %v", seed, i, errA, errG)
	}
	if errA != nil || a.format != FormatPcapNG {
		return 0
	}
	var fa, fg Frame
	for n := 0; ; n++ {
		r0 := a.r
		ea := a.Next(&fa)
		if ea == nil && a.r-r0 > 0 && a.buf[r0] == ngEPB && !a.big {
			fast++
		}
		eg := g.nextNG(&fg)
		if (ea == nil) != (eg == nil) || ea != nil && ea.Error() != eg.Error() {
			t.Fatalf("seed %d input %d frame %d: Next %v, nextNG %v", seed, i, n, ea, eg)
		}
		if ea != nil {
			return fast
		}
		if !fa.Timestamp.Equal(fg.Timestamp) || fa.Interface != fg.Interface || fa.Length != fg.Length ||
			fa.Offset != fg.Offset || !bytes.Equal(fa.Data, fg.Data) || len(fa.Comments) != len(fg.Comments) {
			t.Fatalf("seed %d input %d frame %d: Next %+v, nextNG %+v", seed, i, n, fa, fg)
		}
		for k := range fa.Comments {
			if !bytes.Equal(fa.Comments[k], fg.Comments[k]) {
				t.Fatalf("seed %d input %d frame %d: comment %d %q, nextNG %q", seed, i, n, k, fa.Comments[k], fg.Comments[k])
			}
		}
	}
}

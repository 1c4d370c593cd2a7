package pcap

import (
	"bytes"
	"io"
	"testing"
)

// TestDecodeViolationsInRecord: decoding a frame that breaks one or two
// strict rules into a Record never used before allocates nothing (the
// Record holds them, as a parallel judge's thousands of Records need),
// for every such frame of testdata/malformed.pcapng.
func TestDecodeViolationsInRecord(t *testing.T) {
	r, err := Open("testdata/malformed.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var d Decoder
	var frames []Frame
	for {
		var f Frame
		if err := r.Next(&f); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		f.Data, f.Comments = bytes.Clone(f.Data), nil
		var rec Record
		if d.Decode(&f, nil, &rec); len(rec.Violations) > 0 {
			frames = append(frames, f)
		}
	}
	if len(frames) < 10 {
		t.Fatalf("%d frames break a strict rule, want at least 10", len(frames))
	}
	for _, f := range frames {
		recs, i := make([]Record, 101), 0
		if a := testing.AllocsPerRun(100, func() {
			d.Decode(&f, nil, &recs[i])
			i++
		}); a != 0 {
			d.Decode(&f, nil, &recs[0])
			t.Errorf("frame %d (%d violations): %.1f allocations, want 0", f.Number, len(recs[0].Violations), a)
		}
	}
}

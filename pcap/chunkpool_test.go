package pcap_test

import (
	"io"
	"testing"

	"github.com/openmrc/mrc/pcap"
)

// TestChunkPool: Readers Open made read into pooled chunks and give them
// back when closed, for the next Reader; a chunk is never another open
// Reader's, so frames a Reader keeps (Retain) stay intact while another
// reads the same file through chunks from the pool.
func TestChunkPool(t *testing.T) {
	sizes := make([]int, 3000)
	for i := range sizes {
		sizes[i] = 200 + i*37%1300 // about 2.5 MB: several chunks
	}
	data, _ := patterned(t, sizes)
	path := writeTemp(t, data)
	r1 := mustOpen(t, path)
	r1.Retain()
	var kept []pcap.Frame
	var f pcap.Frame
	for {
		if err := r1.Next(&f); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, f)
	}
	held, _ := r1.PooledChunks()
	if held < 2 {
		t.Fatalf("a retaining Reader over %d bytes holds %d pooled chunks, want several", len(data), held)
	}
	r2 := mustOpen(t, path)
	r2.Retain()
	for n := 0; ; n++ {
		if err := r2.Next(&f); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if !checkPattern(&f, sizes[n]) {
			t.Fatalf("second Reader: frame %d read wrong", n+1)
		}
	}
	for _, k := range kept {
		if !checkPattern(&k, sizes[k.Number-1]) {
			t.Fatalf("frame %d the first Reader keeps changed while another read", k.Number)
		}
	}
	_, free0 := r1.PooledChunks()
	r1.Close()
	if _, free := r1.PooledChunks(); free != free0+held {
		t.Errorf("closing a Reader holding %d pooled chunks: %d free, want %d", held, free, free0+held)
	}
	r3 := mustOpen(t, path)
	if err := r3.Next(&f); err != nil || !checkPattern(&f, sizes[0]) {
		t.Fatalf("a third Reader: %v", err)
	}
	if h, free := r3.PooledChunks(); h != 1 || free != free0+held-1 {
		t.Errorf("a new Reader holds %d pooled chunks (%d free), want 1 taken from the pool (%d free)", h, free, free0+held-1)
	}
}

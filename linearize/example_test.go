package linearize_test

import (
	"fmt"
	"time"

	"github.com/openmrc/mrc/linearize"
)

// Record what applications did and saw, then check it: here a write of
// version 2 completed, yet a later read still saw version 1 — a stale
// packet overwrote it — and a WriteIMM stream delivered out of order.
func ExampleCheckHistory() {
	var h linearize.History
	chunk := linearize.ChunkRegister(1, 0)
	w1 := h.BeginWrite(0, chunk, 1)
	h.EndWrite(w1)
	w2 := h.BeginWrite(0, chunk, 2)
	h.EndWrite(w2)
	h.Read(5, chunk, 1)

	h.Enqueue(0, 0, 0xA)
	h.Enqueue(0, 0, 0xB)
	h.Dequeue(6, 0, 0xB)

	reg, fifo := linearize.CheckHistory(&h, time.Second)
	fmt.Println("memory:", reg.Verdict)
	fmt.Println("WriteIMM stream:", fifo.Verdict)
	// Output:
	// memory: not linearizable
	// WriteIMM stream: not linearizable
}

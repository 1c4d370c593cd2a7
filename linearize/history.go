package linearize

import (
	"math"

	"github.com/anishathalye/porcupine"
)

// Pending is the return time of an operation that never returned (a write
// whose work request never completed): porcupine then lets it take effect
// at any time after its call, or never.
const Pending = math.MaxInt64

// History records operations against a logical clock: every call and
// return takes the next tick, so operations are ordered exactly as the
// recorder saw them happen and no two share an instant.
type History struct {
	clock int64
	reg   []porcupine.Operation
	fifo  []porcupine.Operation
}

// Tick advances the clock and returns the new time.
func (h *History) Tick() int64 {
	h.clock++
	return h.clock
}

// Now returns the last tick.
func (h *History) Now() int64 { return h.clock }

// WriteID names a write whose return is not recorded yet.
type WriteID int

// BeginWrite records the call of a write of version to register (a memory
// chunk) by client and returns its ID; the write stays pending until
// EndWrite.
func (h *History) BeginWrite(client int, register uint64, version uint64) WriteID {
	h.reg = append(h.reg, porcupine.Operation{ClientId: client, Input: RegInput{Register: register, Write: true, Version: version},
		Call: h.Tick(), Return: Pending})
	return WriteID(len(h.reg) - 1)
}

// EndWrite records that the write has taken effect: its return is now.
// Ending a write twice keeps the first return.
func (h *History) EndWrite(id WriteID) {
	if op := &h.reg[id]; op.Return == Pending {
		op.Return = h.Tick()
	}
}

// Read records a read of register by client that observed version, as an
// instantaneous operation.
func (h *History) Read(client int, register uint64, version uint64) {
	t := h.Tick()
	h.reg = append(h.reg, porcupine.Operation{ClientId: client, Input: RegInput{Register: register},
		Output: version, Call: t, Return: h.Tick()})
}

// Enqueue records that client put v on queue (posted a WRITE WITH IMM): the
// post order is the send order, so the enqueue takes effect at once.
func (h *History) Enqueue(client int, queue uint64, v uint32) {
	t := h.Tick()
	h.fifo = append(h.fifo, porcupine.Operation{ClientId: client, Input: FIFOInput{Queue: queue, Op: OpEnqueue, Value: v},
		Call: t, Return: h.Tick()})
}

// Dequeue records that client took v from queue (a receive completion
// delivered immediate data v).
func (h *History) Dequeue(client int, queue uint64, v uint32) {
	t := h.Tick()
	h.fifo = append(h.fifo, porcupine.Operation{ClientId: client, Input: FIFOInput{Queue: queue, Op: OpDequeue},
		Output: v, Call: t, Return: h.Tick()})
}

// Drained records that client observed queue empty: every send on it has
// completed, so every immediate must have been delivered.
func (h *History) Drained(client int, queue uint64) {
	t := h.Tick()
	h.fifo = append(h.fifo, porcupine.Operation{ClientId: client, Input: FIFOInput{Queue: queue, Op: OpEmpty},
		Output: uint32(0), Call: t, Return: h.Tick()})
}

// Registers returns the register operations recorded so far.
func (h *History) Registers() []porcupine.Operation { return h.reg }

// FIFO returns the queue operations recorded so far.
func (h *History) FIFO() []porcupine.Operation { return h.fifo }

// Len returns the number of operations recorded.
func (h *History) Len() int { return len(h.reg) + len(h.fifo) }

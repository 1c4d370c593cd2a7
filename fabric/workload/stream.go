package workload

import "errors"

// stream keeps a connection busy: depth work requests of size bytes
// outstanding, every immEvery-th a WRITE WITH IMM, walking through the
// destination's memory.
type stream struct {
	h        *Harness
	conn     int
	size     int
	depth    int
	immEvery int
	cursor   int
	n        int
	stopped  bool
}

// Stream keeps depth work requests of size bytes outstanding on conn from
// now on, reposting as they complete; every immEvery-th is a WRITE WITH
// IMM (0: none). It is the saturating workload of throughput runs.
func (h *Harness) Stream(conn, size, depth, immEvery int) error {
	if conn < 0 || conn >= len(h.conns) {
		return ErrNoConn
	}
	st := &stream{h: h, conn: conn, size: size, depth: depth, immEvery: immEvery}
	h.conns[conn].stream = st
	st.refill()
	return nil
}

// StopStreams stops reposting on every connection.
func (h *Harness) StopStreams() {
	for _, c := range h.conns {
		if c.stream != nil {
			c.stream.stopped = true
		}
	}
}

func (st *stream) refill() {
	h := st.h
	c := h.conns[st.conn]
	chunks := max(1, (st.size+h.mtu-1)/h.mtu)
	for !st.stopped && int(c.Posted-c.Completed-c.Failed) < st.depth {
		if st.cursor+chunks > h.Chunks() {
			st.cursor = 0
		}
		st.n++
		imm := st.immEvery > 0 && st.n%st.immEvery == 0
		_, err := h.Post(WR{Conn: st.conn, Imm: imm, Chunk: st.cursor, Size: st.size})
		if errors.Is(err, ErrBusy) {
			return
		}
		if errors.Is(err, ErrQPFailed) {
			st.stopped = true
			return
		}
		if err != nil {
			h.fail("harness", "stream post: %v", err)
			st.stopped = true
			return
		}
		st.cursor += chunks
	}
}

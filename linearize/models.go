package linearize

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// RegInput is a register operation: a write of Version, or a read (whose
// output is the version seen). A register is one memory chunk of a
// responder: the bytes one write packet places, identified by the
// recorder (node and chunk index packed in a uint64).
type RegInput struct {
	Register uint64
	Write    bool
	Version  uint64
}

// Registers is the sequential specification of responder memory: one
// register per chunk, initially version 0 (never written), a write sets
// it, a read returns it. It is partitioned per register, so a check costs
// the sum of small per-chunk searches, not one search over the product.
//
// A WRITE of version v to a chunk is an operation from its post to its
// completion: the send completion, or the receive completion of a WRITE
// WITH IMM posted at or after it on the same QP, whichever comes first
// (CMP-SND-1, WIMM-RSP-1). Reads are instantaneous. The history is
// linearizable only if every read returns the version of a write that
// could have been the chunk's latest at that instant. That rejects a stale
// or duplicate packet placed after a newer write completed (RSP-DUP-1), a
// packet of an older PSN cycle accepted as new (PSN aliasing, RSP-RCV-6),
// and a completion reported before its data was placed (WIMM-RSP-1).
var Registers = porcupine.Model{
	Partition: partitionBy(func(in any) uint64 { return in.(RegInput).Register }),
	Init:      func() any { return uint64(0) },
	Step: func(state, input, output any) (bool, any) {
		in := input.(RegInput)
		if in.Write {
			return true, in.Version
		}
		return output.(uint64) == state.(uint64), state
	},
	Equal: func(a, b any) bool { return a.(uint64) == b.(uint64) },
	Hash:  func(s any) uint64 { return s.(uint64) },
	DescribeOperation: func(input, output any) string {
		in := input.(RegInput)
		if in.Write {
			return fmt.Sprintf("write(%s) v%d", chunkName(in.Register), in.Version)
		}
		return fmt.Sprintf("read(%s) → v%d", chunkName(in.Register), output.(uint64))
	},
	DescribeState: func(s any) string { return fmt.Sprintf("v%d", s.(uint64)) },
}

// ChunkRegister packs a node and chunk index into a register name.
func ChunkRegister(node, chunk int) uint64 { return uint64(node)<<32 | uint64(uint32(chunk)) }

func chunkName(r uint64) string { return fmt.Sprintf("node%d/chunk%d", r>>32, uint32(r)) }

// FIFOOp is a queue operation.
type FIFOOp uint8

// Queue operations.
const (
	OpEnqueue FIFOOp = iota
	OpDequeue
	OpEmpty // observe the queue empty
)

// FIFOInput is an operation on one QP's WriteIMM completion stream.
type FIFOInput struct {
	Queue uint64
	Op    FIFOOp
	Value uint32
}

// FIFO is the sequential specification of the WRITE WITH IMM completion
// stream of one QP: a FIFO channel into which posting a WRITE WITH IMM puts
// its immediate data and out of which each receive completion takes the
// oldest. Linearizability rejects completions out of send order
// (WIMM-RSP-2), twice (exactly once, CMP-RCV-1) or missing (the queue is
// observed empty once every send has completed). States are immutable
// slices: Step copies, so that porcupine's backtracking never sees a state
// change under it.
var FIFO = porcupine.Model{
	Partition: partitionBy(func(in any) uint64 { return in.(FIFOInput).Queue }),
	Init:      func() any { return []uint32(nil) },
	Step: func(state, input, output any) (bool, any) {
		q := state.([]uint32)
		in := input.(FIFOInput)
		switch in.Op {
		case OpEnqueue:
			n := make([]uint32, len(q)+1)
			copy(n, q)
			n[len(q)] = in.Value
			return true, n
		case OpDequeue:
			if len(q) == 0 || q[0] != output.(uint32) {
				return false, q
			}
			return true, q[1:len(q):len(q)]
		}
		return len(q) == 0, q
	},
	Equal: func(a, b any) bool { return slices.Equal(a.([]uint32), b.([]uint32)) },
	Hash: func(s any) uint64 {
		h := fnv.New64a()
		for _, v := range s.([]uint32) {
			_, _ = h.Write([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
		}
		return h.Sum64()
	},
	DescribeOperation: func(input, output any) string {
		in := input.(FIFOInput)
		switch in.Op {
		case OpEnqueue:
			return fmt.Sprintf("post imm=%#x (qp %d)", in.Value, in.Queue)
		case OpDequeue:
			return fmt.Sprintf("completion → imm=%#x (qp %d)", output.(uint32), in.Queue)
		}
		return fmt.Sprintf("drained (qp %d)", in.Queue)
	},
	DescribeState: func(s any) string {
		q := s.([]uint32)
		parts := make([]string, len(q))
		for i, v := range q {
			parts[i] = fmt.Sprintf("%#x", v)
		}
		return "[" + strings.Join(parts, " ") + "]"
	},
}

// partitionBy splits a history by key, keeping each partition in history
// order and the partitions in key order, so results are deterministic.
func partitionBy(key func(any) uint64) func([]porcupine.Operation) [][]porcupine.Operation {
	return func(h []porcupine.Operation) [][]porcupine.Operation {
		idx := map[uint64]int{}
		var keys []uint64
		var parts [][]porcupine.Operation
		for _, op := range h {
			k := key(op.Input)
			i, ok := idx[k]
			if !ok {
				i = len(parts)
				idx[k] = i
				keys = append(keys, k)
				parts = append(parts, nil)
			}
			parts[i] = append(parts[i], op)
		}
		order := make([]int, len(parts))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return keys[order[a]] < keys[order[b]] })
		out := make([][]porcupine.Operation, len(parts))
		for i, j := range order {
			out[i] = parts[j]
		}
		return out
	}
}

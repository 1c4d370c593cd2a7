// Package opstack lists, for every MRC opcode, the transport headers its
// packets carry. The list is derived from the codec rather than restated:
// for each opcode, with and without the BTH TS flag, a packet is encoded
// with wire's Append, decoded with Decode, and what Walk visits is kept.
// The Lua dissector generator (package pcap) and the gopacket layers
// (package gopkt) therefore follow wire's stacks.
package opstack

import (
	"sync"

	"github.com/openmrc/mrc/wire"
)

// Stack is the list of transport headers (BTH first) that an opcode
// carries with or without the BTH TS flag, and whether a payload
// follows.
type Stack struct {
	Headers []*wire.Header // BTH, then extension headers in wire order
	HdrLen  int            // total length of headers, BTH included
	Payload bool           // a write: payload (and pad) follow
}

// stacks holds stacks[op][ts] for valid opcodes, Headers nil for invalid
// ones, built on first use: the judge and the printers need none.
var stacks = sync.OnceValue(func() *[256][2]Stack { return build(wire.Default) })

func build(c *wire.Codec) *[256][2]Stack {
	var t [256][2]Stack
	for op := 0; op < 256; op++ {
		o := wire.Opcode(op)
		if !o.Valid() {
			continue
		}
		for ts := 0; ts < 2; ts++ {
			p := wire.Packet{}
			p.BTH.Opcode = o
			p.BTH.TSPresent = ts == 1 && o.IsWrite()
			b, err := c.Append(nil, &p)
			if err != nil {
				panic("opstack: wire cannot encode " + o.String() + ": " + err.Error())
			}
			var q wire.Packet
			if err := c.Decode(b, &q); err != nil {
				panic("opstack: wire cannot decode its own " + o.String() + ": " + err.Error())
			}
			s := &t[op][ts]
			c.Walk(&q, func(h *wire.Header, _ int) {
				s.Headers = append(s.Headers, h)
				s.HdrLen += h.Len
			})
			s.Payload = q.Decoded&wire.HasPayload != 0
		}
	}
	return &t
}

// Get returns the stack of opcode op with the TS flag ts (ignored by
// opcodes other than writes), or nil for an invalid opcode.
func Get(op wire.Opcode, ts bool) *Stack {
	i := 0
	if ts {
		i = 1
	}
	s := &stacks()[op][i]
	if s.Headers == nil {
		return nil
	}
	return s
}

// Of returns the stack of a BTH, or nil for an invalid opcode.
func Of(h *wire.BTH) *Stack { return Get(h.Opcode, h.TSPresent) }

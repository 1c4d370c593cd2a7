package pcap

import (
	"sync"

	"github.com/openmrc/mrc/wire"
)

// opStack is the list of transport headers (BTH first) that an opcode
// carries, with and without the BTH TS flag, and whether a payload
// follows. It is derived from the codec itself rather than restated here:
// buildStacks encodes a packet of every opcode with wire's Append,
// decodes it with Decode and lists what Walk visits. The gopacket layers,
// the Lua generator and the tests therefore all follow wire's stacks.
type opStack struct {
	headers []*wire.Header // BTH, then extension headers in wire order
	hdrLen  int            // total length of headers, BTH included
	payload bool           // a write: payload (and pad) follow
}

// stacks returns stacks[op][ts] for valid opcodes, headers nil for
// invalid ones, built on first use (the gopacket layers, the Lua
// generator): the judge and the printers need none.
var stacks = sync.OnceValue(func() *[256][2]opStack { return buildStacks(wire.Default) })

func buildStacks(c *wire.Codec) *[256][2]opStack {
	var t [256][2]opStack
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
				panic("pcap: wire cannot encode " + o.String() + ": " + err.Error())
			}
			var q wire.Packet
			if err := c.Decode(b, &q); err != nil {
				panic("pcap: wire cannot decode its own " + o.String() + ": " + err.Error())
			}
			s := &t[op][ts]
			c.Walk(&q, func(h *wire.Header, _ int) {
				s.headers = append(s.headers, h)
				s.hdrLen += h.Len
			})
			s.payload = q.Decoded&wire.HasPayload != 0
		}
	}
	return &t
}

// stackOf returns the header stack of a BTH, or nil for an invalid opcode.
func stackOf(h *wire.BTH) *opStack {
	ts := 0
	if h.TSPresent {
		ts = 1
	}
	s := &stacks()[h.Opcode][ts]
	if s.headers == nil {
		return nil
	}
	return s
}

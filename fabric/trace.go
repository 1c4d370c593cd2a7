package fabric

import (
	"bufio"
	"io"
	"strconv"

	"github.com/openmrc/mrc/statemachine"
)

// tracer writes the NDJSON trace: one JSON object per line, built with
// strconv appends into a reused buffer so that tracing allocates nothing
// per line. Every line has "t" (ns) and "k" (kind):
//
//	tx, rx, drop, trim, ce, dup  a packet: pkt (fabric id), src, dst, plane,
//	                             path, op, qp (destination QPN), psn, ev,
//	                             len (payload bytes), rtx, why
//	hop                          the same plus link (kind) and li (index)
//	qp                           an endpoint event (statemachine.Event):
//	                             node, qp, e (kind), psn, ev, msn, plane,
//	                             from, to, reason, flags, value
//	link                         a link, port or T1 change: link, plane, a,
//	                             path, up
//	note                         what, msg
type tracer struct {
	w *bufio.Writer
	b []byte
}

func newTracer(w io.Writer) *tracer { return &tracer{w: bufio.NewWriterSize(w, 1<<16)} }

func (t *tracer) begin(now Time, kind string) {
	t.b = append(t.b[:0], `{"t":`...)
	t.b = strconv.AppendInt(t.b, int64(now), 10)
	t.b = append(t.b, `,"k":"`...)
	t.b = append(t.b, kind...)
	t.b = append(t.b, '"')
}

func (t *tracer) int(key string, v int64) {
	t.b = append(t.b, ',', '"')
	t.b = append(t.b, key...)
	t.b = append(t.b, '"', ':')
	t.b = strconv.AppendInt(t.b, v, 10)
}

func (t *tracer) str(key, v string) {
	t.b = append(t.b, ',', '"')
	t.b = append(t.b, key...)
	t.b = append(t.b, '"', ':')
	t.b = appendJSONString(t.b, v)
}

func (t *tracer) end() {
	t.b = append(t.b, '}', '\n')
	_, _ = t.w.Write(t.b)
}

func (t *tracer) packet(now Time, kind string, f *flight, why string) {
	t.begin(now, kind)
	t.pktFields(f)
	if why != "" {
		t.str("why", why)
	}
	t.end()
}

func (t *tracer) pktFields(f *flight) {
	p := &f.pkt
	t.int("pkt", int64(f.id))
	t.int("src", int64(f.src))
	t.int("dst", int64(f.dst))
	t.int("plane", int64(f.plane))
	t.int("path", int64(f.path))
	t.str("op", p.BTH.Opcode.String())
	t.int("qp", int64(p.BTH.DestQP))
	t.int("psn", int64(p.BTH.PSN))
	t.int("ev", int64(f.ev))
	t.int("len", int64(len(p.Payload)))
	if p.BTH.Retransmit {
		t.b = append(t.b, `,"rtx":true`...)
	}
	if f.dup {
		t.b = append(t.b, `,"copy":true`...)
	}
}

func (t *tracer) hop(now Time, f *flight, k LinkKind, li int) {
	t.begin(now, "hop")
	t.pktFields(f)
	t.str("link", k.String())
	t.int("li", int64(li))
	t.end()
}

func (t *tracer) qpEvents(node int, es []statemachine.Event) {
	for i := range es {
		e := &es[i]
		t.begin(e.Time, "qp")
		t.int("node", int64(node))
		t.int("qp", int64(e.QPN))
		t.str("e", e.Kind.String())
		t.int("psn", int64(e.PSN))
		t.int("ev", int64(e.EV))
		t.int("msn", int64(e.MSN))
		t.int("plane", int64(e.Plane))
		t.int("from", int64(e.From))
		t.int("to", int64(e.To))
		t.int("reason", int64(e.Reason))
		t.int("flags", int64(e.Flags))
		t.int("value", int64(e.Value))
		t.end()
	}
}

func (t *tracer) link(now Time, k LinkKind, plane, a, path int, up bool) {
	t.begin(now, "link")
	t.str("link", k.String())
	t.int("plane", int64(plane))
	t.int("a", int64(a))
	t.int("path", int64(path))
	t.b = append(t.b, `,"up":`...)
	t.b = strconv.AppendBool(t.b, up)
	t.end()
}

func (t *tracer) note(now Time, what, msg string) {
	t.begin(now, "note")
	t.str("what", what)
	t.str("msg", msg)
	t.end()
}

// Note writes a free-form line to the trace (if tracing), for scenario
// drivers to mark phases.
func (s *Sim) Note(what, msg string) {
	if s.tr != nil {
		s.tr.note(s.now, what, msg)
	}
}

// Flush writes out buffered trace and frame-sink data; call it at the end of
// a run.
func (s *Sim) Flush() error {
	if s.tr != nil {
		if err := s.tr.w.Flush(); err != nil {
			return err
		}
	}
	if s.sink != nil {
		return s.sink.Flush()
	}
	return nil
}

// appendJSONString appends v as a JSON string literal.
func appendJSONString(b []byte, v string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

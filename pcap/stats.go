package pcap

import (
	"bufio"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"

	"github.com/openmrc/mrc/wire"
	"github.com/openmrc/mrc/wire/evstate"
)

// EVTransition is one inferred path-state change and the frame that caused
// it. The states are the path states of evstate (EV-ST-1); a capture shows
// only GOOD, SKIP and ASSUMED_BAD. Timer-driven changes (a SKIP expiring, a
// timeout marking a path bad) leave no packet behind and are inferred from
// what follows.
type EVTransition struct {
	Frame    int
	From, To evstate.State
	Cause    string
}

// QPStats summarises the frames sent to one destination QP.
type QPStats struct {
	QP           uint32
	Packets      int
	Writes       int // write packets
	PayloadBytes int64
	Retransmits  int // writes with the BTH RTX flag
	Trimmed      int // writes trimmed in the fabric
	ACKs         int
	SACKs        int
	SACKHoles    int // runs of missing PSNs reported by SACKs, summed
	SACKMissing  int // missing PSNs reported by SACKs, summed
	NACKs        map[wire.NACKReason]int
	Probes       int
	EndpointOps  int
}

// MaxTransitions bounds the transitions an EVStats keeps; Changes still
// counts them all.
const MaxTransitions = 16

// EVStats summarises one entropy value: the frames that travelled on it
// and the feedback (SACK m verdicts, NACKs) that names it.
type EVStats struct {
	EV          uint32
	Packets     int // frames carrying this EV
	Writes      int
	Retransmits int
	Trimmed     int // trimmed on this path (not at the last hop)
	TrimmedLast int // trimmed at the last hop
	CE          int // ECN congestion experienced
	Probes      int
	// Feedback naming this EV in its entropy field.
	SACKs      int
	SkipOnce   int // SACK m = SKIP_ONCE
	AlwaysSkip int // SACK m = ALWAYS_SKIP
	NACKs      map[wire.NACKReason]int
	// Inferred path state (see EVTransition); GOOD until feedback says
	// otherwise.
	State       evstate.State
	Changes     int
	Transitions []EVTransition // the first MaxTransitions
}

// Stats accumulates per-QP and per-EV summaries over decoded records.
type Stats struct {
	Frames     int
	MRC        int
	Malformed  int
	NotMRC     int
	Violations ReqCounts // strict findings by requirement
	Errors     ReqCounts // decode errors by requirement; wire.NoReq: one that names none
	QPs        map[uint32]*QPStats
	EVs        map[uint32]*EVStats
}

// NewStats returns empty statistics.
func NewStats() *Stats {
	return &Stats{QPs: map[uint32]*QPStats{}, EVs: map[uint32]*EVStats{}}
}

// ReqCounts counts frames by the requirement the codec reports, indexed
// by wire.ReqID.
type ReqCounts [wire.NumReqs]int

// add counts one frame under r; a value that is no wire.ReqID counts as
// wire.NoReq.
func (c *ReqCounts) add(r wire.ReqID) {
	if r >= wire.NumReqs {
		r = wire.NoReq
	}
	c[r]++
}

// each calls f with the text and count of every requirement counted, in
// the order of the text (that of wire.ReqID); wire.NoReq's text is "-".
func (c *ReqCounts) each(f func(req string, n int)) {
	for r, n := range c {
		switch {
		case n == 0:
		case r == int(wire.NoReq):
			f("-", n)
		default:
			f(wire.ReqID(r).String(), n)
		}
	}
}

func (s *Stats) qp(n uint32) *QPStats {
	q := s.QPs[n]
	if q == nil {
		q = &QPStats{QP: n, NACKs: map[wire.NACKReason]int{}}
		s.QPs[n] = q
	}
	return q
}

func (s *Stats) ev(n uint32) *EVStats {
	e := s.EVs[n]
	if e == nil {
		e = &EVStats{EV: n, State: evstate.Good, NACKs: map[wire.NACKReason]int{}}
		s.EVs[n] = e
	}
	return e
}

func (e *EVStats) move(frame int, to evstate.State, cause string) {
	if e.State == to {
		return
	}
	if len(e.Transitions) < MaxTransitions {
		e.Transitions = append(e.Transitions, EVTransition{Frame: frame, From: e.State, To: to, Cause: cause})
	}
	e.State = to
	e.Changes++
}

// Add counts one record.
func (s *Stats) Add(r *Record) {
	s.Frames++
	for i := range r.Violations {
		s.Violations.add(r.Violations[i].Req)
	}
	if r.Err != nil {
		req := wire.NoReq
		if we := errOf(r.Err); we != nil {
			req = we.Req
		}
		if r.Malformed() {
			s.Malformed++
			s.Errors.add(req)
		} else {
			s.NotMRC++
		}
	}
	if !r.MRC() {
		return
	}
	s.MRC++
	pk := &r.Packet
	h := &pk.BTH
	q := s.qp(h.DestQP)
	q.Packets++
	e := s.ev(r.EV)
	e.Packets++
	if pk.ECN() == 3 {
		e.CE++
	}
	d := pk.Decoded
	switch {
	case h.Opcode.IsWrite():
		q.Writes++
		e.Writes++
		q.PayloadBytes += int64(len(pk.Payload))
		if h.Retransmit {
			q.Retransmits++
			e.Retransmits++
		}
		if pk.Trimmed {
			q.Trimmed++
			if pk.TrimmedLastHop {
				e.TrimmedLast++
			} else {
				e.Trimmed++
			}
		}
	case d&wire.HasAETH != 0:
		q.ACKs++
	case d&wire.HasSETH != 0:
		sh := &pk.SETH
		q.SACKs++
		holes, missing := SACKGaps(sh)
		q.SACKHoles += holes
		q.SACKMissing += missing
		f := s.ev(sh.Entropy)
		f.SACKs++
		switch sh.M {
		case wire.MSkipOnce:
			f.SkipOnce++
		case wire.MAlwaysSkip:
			f.AlwaysSkip++
		}
		// The capture lacks the timer-driven moves the table needs (a
		// rotation ending, a timeout retiring the EV), so the inferred
		// state follows the state each verdict names: NONE means the path
		// was in use again, so any skip had ended or a probe succeeded.
		if to, ok := evstate.Named(sh.M); ok {
			f.move(r.Number, to, "SACK m="+sh.M.String())
		}
	case d&wire.HasNETH != 0:
		n := &pk.NETH
		q.NACKs[n.Reason]++
		f := s.ev(n.Entropy)
		f.NACKs[n.Reason]++
		// A last-hop trim is incast, not the path's fault (EV-ST-3).
		if to, ok := evstate.Next(f.State, evstate.OfNACK(n.Reason)); ok {
			f.move(r.Number, to, "NACK "+n.Reason.String())
		}
	case d&wire.HasPETH != 0:
		q.Probes++
		e.Probes++
	case d&(wire.HasERTH|wire.HasEETH) != 0:
		q.EndpointOps++
	}
}

// SACKGaps returns how many runs of missing PSNs (holes) a SACK reports
// and how many PSNs they hold: PSNs from cack_psn up to the highest PSN
// the bitmap marks received that are not marked (WIRE-SETH-5).
func SACKGaps(s *wire.SETH) (holes, missing int) {
	if s.SACKBitmap == 0 {
		return 0, 0
	}
	cack, base := s.CACKPSN, s.BitmapBase()
	hi := 63 - bits.LeadingZeros64(s.SACKBitmap)
	if wire.PSNDiff(wire.PSNAdd(base, hi), cack) < 0 {
		return 0, 0
	}
	in := false
	if pre := int(wire.PSNDiff(base, cack)); pre > 0 {
		holes, missing, in = 1, pre, true
	}
	for i := 0; i <= hi; i++ {
		if wire.PSNDiff(wire.PSNAdd(base, i), cack) < 0 {
			continue
		}
		if s.SACKBitmap>>uint(i)&1 == 1 {
			in = false
			continue
		}
		missing++
		if !in {
			holes++
			in = true
		}
	}
	return holes, missing
}

func sortedKeys[K ~uint8 | ~uint32 | ~string, V any](m map[K]V) []K {
	k := make([]K, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	slices.Sort(k)
	return k
}

func nackText(m map[wire.NACKReason]int) string {
	s := ""
	for _, r := range sortedKeys(m) {
		if s != "" {
			s += ","
		}
		s += r.String() + ":" + strconv.Itoa(m[r])
	}
	if s == "" {
		return "-"
	}
	return s
}

func countText(c *ReqCounts) string {
	s := ""
	c.each(func(k string, n int) {
		if s != "" {
			s += " "
		}
		s += k + ":" + strconv.Itoa(n)
	})
	if s == "" {
		return "none"
	}
	return s
}

// WriteText writes the summary as aligned tables.
func (s *Stats) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Frames: %d  MRC: %d  malformed: %d  not MRC: %d\n", s.Frames, s.MRC, s.Malformed, s.NotMRC)
	fmt.Fprintf(bw, "Decode errors: %s\n", countText(&s.Errors))
	fmt.Fprintf(bw, "Violations: %s\n", countText(&s.Violations))
	fmt.Fprintf(bw, "\nPer QP (dest_qp):\n")
	fmt.Fprintf(bw, "  %-8s %7s %7s %10s %5s %5s %5s %6s %6s %8s %6s %4s  %s\n",
		"qp", "packets", "writes", "bytes", "rtx", "trim", "acks", "sacks", "holes", "missing", "probes", "ep", "nacks")
	for _, k := range sortedKeys(s.QPs) {
		q := s.QPs[k]
		fmt.Fprintf(bw, "  0x%06x %7d %7d %10d %5d %5d %5d %6d %6d %8d %6d %4d  %s\n",
			q.QP, q.Packets, q.Writes, q.PayloadBytes, q.Retransmits, q.Trimmed, q.ACKs, q.SACKs,
			q.SACKHoles, q.SACKMissing, q.Probes, q.EndpointOps, nackText(q.NACKs))
	}
	fmt.Fprintf(bw, "\nPer EV (frames carrying it; feedback naming it):\n")
	fmt.Fprintf(bw, "  %-10s %7s %6s %4s %4s %5s %4s %6s %5s %9s %11s %-11s %7s  %s\n",
		"ev", "packets", "writes", "rtx", "trim", "trimL", "ce", "probes", "sacks", "skip_once", "always_skip", "state", "changes", "nacks")
	for _, k := range sortedKeys(s.EVs) {
		e := s.EVs[k]
		fmt.Fprintf(bw, "  0x%08x %7d %6d %4d %4d %5d %4d %6d %5d %9d %11d %-11s %7d  %s\n",
			e.EV, e.Packets, e.Writes, e.Retransmits, e.Trimmed, e.TrimmedLast, e.CE, e.Probes, e.SACKs,
			e.SkipOnce, e.AlwaysSkip, e.State, e.Changes, nackText(e.NACKs))
	}
	first := true
	for _, k := range sortedKeys(s.EVs) {
		e := s.EVs[k]
		for _, t := range e.Transitions {
			if first {
				fmt.Fprintf(bw, "\nEV state changes (inferred):\n")
				first = false
			}
			fmt.Fprintf(bw, "  0x%08x frame %d: %s -> %s (%s)\n", e.EV, t.Frame, t.From, t.To, t.Cause)
		}
		if e.Changes > len(e.Transitions) {
			fmt.Fprintf(bw, "  0x%08x ... %d more\n", e.EV, e.Changes-len(e.Transitions))
		}
	}
	return bw.Flush()
}

// WriteJSON writes the summary as one JSON object.
func (s *Stats) WriteJSON(w io.Writer) error {
	o := jsonObj{b: []byte{'{'}, first: true}
	o.int("frames", int64(s.Frames))
	o.int("mrc", int64(s.MRC))
	o.int("malformed", int64(s.Malformed))
	o.int("not_mrc", int64(s.NotMRC))
	counts := func(k string, c *ReqCounts) {
		o.open(k)
		c.each(func(x string, n int) { o.int(x, int64(n)) })
		o.close()
	}
	nacks := func(m map[wire.NACKReason]int) {
		o.open("nacks")
		for _, x := range sortedKeys(m) {
			o.int(x.String(), int64(m[x]))
		}
		o.close()
	}
	counts("errors", &s.Errors)
	counts("violations", &s.Violations)
	o.key("qps")
	o.b = append(o.b, '[')
	for i, k := range sortedKeys(s.QPs) {
		q := s.QPs[k]
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b, o.first = append(o.b, '{'), true
		o.uint("dest_qp", uint64(q.QP))
		o.int("packets", int64(q.Packets))
		o.int("writes", int64(q.Writes))
		o.int("payload_bytes", q.PayloadBytes)
		o.int("retransmits", int64(q.Retransmits))
		o.int("trimmed", int64(q.Trimmed))
		o.int("acks", int64(q.ACKs))
		o.int("sacks", int64(q.SACKs))
		o.int("sack_holes", int64(q.SACKHoles))
		o.int("sack_missing", int64(q.SACKMissing))
		o.int("probes", int64(q.Probes))
		o.int("endpoint_ops", int64(q.EndpointOps))
		nacks(q.NACKs)
		o.close()
	}
	o.b = append(o.b, ']')
	o.key("evs")
	o.b = append(o.b, '[')
	for i, k := range sortedKeys(s.EVs) {
		e := s.EVs[k]
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b, o.first = append(o.b, '{'), true
		o.uint("ev", uint64(e.EV))
		o.int("packets", int64(e.Packets))
		o.int("writes", int64(e.Writes))
		o.int("retransmits", int64(e.Retransmits))
		o.int("trimmed", int64(e.Trimmed))
		o.int("trimmed_lasthop", int64(e.TrimmedLast))
		o.int("ce", int64(e.CE))
		o.int("probes", int64(e.Probes))
		o.int("sacks", int64(e.SACKs))
		o.int("skip_once", int64(e.SkipOnce))
		o.int("always_skip", int64(e.AlwaysSkip))
		nacks(e.NACKs)
		o.str("state", e.State.String())
		o.int("state_changes", int64(e.Changes))
		o.key("transitions")
		o.b = append(o.b, '[')
		for j, t := range e.Transitions {
			if j > 0 {
				o.b = append(o.b, ',')
			}
			o.b, o.first = append(o.b, '{'), true
			o.int("frame", int64(t.Frame))
			o.str("from", t.From.String())
			o.str("to", t.To.String())
			o.str("cause", t.Cause)
			o.close()
		}
		o.b = append(o.b, ']')
		o.close()
	}
	o.b = append(o.b, ']')
	o.close()
	o.b = append(o.b, '\n')
	_, err := w.Write(o.b)
	return err
}

package pcap

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/openmrc/mrc/wire"
)

// Record is one frame and what the codec made of it.
type Record struct {
	Frame
	// Iface is the frame's capture interface, or nil if the file did not
	// declare it.
	Iface *Interface
	// Packet is the decoded frame, filled up to the first error.
	Packet wire.Packet
	// Err is the error that stopped decoding: a *wire.Error (with its
	// requirement ID), or a *LinkError for a non-Ethernet frame. nil
	// when the frame decoded. A *wire.Error is held in the Record
	// (wire.Codec.DecodeInto): decoding into the Record again changes
	// it, and its Message formats the text.
	Err error
	// Violations are the strict Check findings of a frame that decoded.
	Violations []wire.Violation
	// ICRCOK reports a correct ICRC (false for trimmed frames, which carry
	// none, for frames cut by the snap length, and for frames that did not
	// decode).
	ICRCOK bool
	// Cut reports a frame the capture's snap length cut after its headers,
	// decoded from them (Decoder.Cut, wire.Codec.DecodeCut): Data is then
	// the frame rebuilt to its length, whose bytes past the first Kept are
	// zeros, not the frame's; its ICRC and pad bytes were not checked.
	Cut  bool
	Kept int
	// EV is the entropy value the frame carries under the Decoder's mode.
	EV uint32
	// Rel is the time since the first frame the Decoder decoded, as
	// tshark's relative time column shows it.
	Rel time.Duration

	// werr holds Err when the codec stopped: a stream of malformed
	// frames decodes without allocating.
	werr wire.Error
	// viol is Violations' first backing array: a Record's first frames
	// breaking a rule or two allocate nothing either (a parallel judge
	// holds thousands of Records).
	viol [2]wire.Violation
}

// MRC reports whether the frame is MRC: it reached a whole BTH with a
// valid MRC opcode (it may still be truncated further on or break rules).
func (r *Record) MRC() bool {
	_, _, bth := r.Packet.Offsets()
	return bth != 0 && r.Packet.BTH.Opcode.Valid()
}

// Malformed reports whether decoding failed for a reason other than the
// frame not being MRC at all (another EtherType, protocol or UDP port).
func (r *Record) Malformed() bool {
	return r.Err != nil && !errors.Is(r.Err, wire.ErrUnsupported)
}

// LinkError reports a frame whose link type the decoder does not handle.
type LinkError struct {
	LinkType LinkType
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("link type %d (%s): only Ethernet captures are decoded", uint16(e.LinkType), e.LinkType)
}

// Unwrap makes a LinkError match wire.ErrUnsupported.
func (e *LinkError) Unwrap() error { return wire.ErrUnsupported }

// Decoder decodes frames into Records with a wire.Codec. The zero value
// uses wire.Default, the STEV EV mode and runs the strict checks.
type Decoder struct {
	Codec   *wire.Codec // nil: wire.Default
	EVMode  wire.EVMode // how EVs are read from the frame (WIRE-EV-1..4)
	NoCheck bool        // skip Check and the ICRC (faster, no Violations)
	// Cut makes frames the capture's snap length cut after their headers
	// decode from them (Record.Cut) rather than fail as truncated.
	Cut bool

	cut []byte // the frame DecodeCut rebuilds

	first Epoch // timestamp of the first frame, for Record.Rel
	seen  bool
	icrc  wire.ICRCScratch
}

// Reset makes the next frame the first one again, for Record.Rel. Each
// calls it before reading a capture.
func (d *Decoder) Reset() { d.seen = false }

// Start makes Record.Rel count from t rather than from the first frame:
// a live capture counts from its start, so that frames of several
// interfaces, read by one reader each, never show negative times.
func (d *Decoder) Start(t time.Time) { d.first, d.seen = NewEpoch(t), true }

func (d *Decoder) codec() *wire.Codec {
	if d.Codec != nil {
		return d.Codec
	}
	return wire.Default
}

// Decode decodes f, captured on in (may be nil), into r. It does not
// allocate when the frame decodes cleanly; r.Data aliases f.Data.
func (d *Decoder) Decode(f *Frame, in *Interface, r *Record) {
	d.decode(f, in, r, false, 0, wire.PreICRC{})
}

// DecodePre is Decode for a frame whose ICRC may have been computed
// before (wire.Codec.PreICRC, with this Decoder's Codec): the decode uses
// it when it was computed at the offsets the decode finds.
func (d *Decoder) DecodePre(f *Frame, in *Interface, r *Record, pre wire.PreICRC) {
	d.decode(f, in, r, false, 0, pre)
}

// DecodeComputed is Decode for a caller that computed the frame's ICRC
// already (wire.Codec.CheckComputed): icrc is that value.
func (d *Decoder) DecodeComputed(f *Frame, in *Interface, r *Record, icrc uint32) {
	d.decode(f, in, r, true, icrc, wire.PreICRC{})
}

func (d *Decoder) decode(f *Frame, in *Interface, r *Record, computed bool, icrc uint32, pre wire.PreICRC) {
	c := d.codec()
	r.Frame, r.Iface = *f, in
	if !d.seen {
		d.first, d.seen = NewEpoch(f.Timestamp), true
	}
	r.Rel = d.first.Since(f.Timestamp)
	r.Err, r.ICRCOK, r.EV, r.Cut = nil, false, 0, false
	r.Violations = r.Violations[:0]
	if cap(r.Violations) == 0 {
		r.Violations = r.viol[:0]
	}
	if in != nil && in.LinkType != LinkTypeEthernet {
		r.Packet = wire.Packet{}
		r.Err = &LinkError{LinkType: in.LinkType}
		return
	}
	if d.Cut && f.Length > len(f.Data) {
		d.decodeCut(c, f, r)
		return
	}
	if err := c.DecodeInto(f.Data, &r.Packet, &r.werr); err != nil {
		r.Err = err
	} else if !d.NoCheck {
		switch {
		case computed || r.Packet.Trimmed:
		case pre.Computed():
			icrc = c.ComputeICRCPre(f.Data, &r.Packet, pre, &d.icrc)
		default:
			icrc = c.ComputeICRCScratch(f.Data, &r.Packet, &d.icrc)
		}
		r.Violations = c.CheckComputed(f.Data, &r.Packet, r.Violations, icrc)
		r.ICRCOK = !r.Packet.Trimmed && icrc == r.Packet.ICRC // CheckComputed's ICRC verdict
	}
	r.EV = c.EV(&r.Packet, d.EVMode)
}

// decodeCut decodes a frame cut by the snap length from its headers
// (Decoder.Cut): its checks leave out the ICRC, which the cut removed.
func (d *Decoder) decodeCut(c *wire.Codec, f *Frame, r *Record) {
	data, cut, err := c.DecodeCut(f.Data, f.Length, &d.cut, &r.Packet, &r.werr)
	r.Data, r.Cut, r.Kept, r.Err = data, cut, len(f.Data), err
	if err == nil && !d.NoCheck {
		r.Violations = c.CheckHeaders(data, &r.Packet, r.Violations)
	}
	r.EV = c.EV(&r.Packet, d.EVMode)
}

// HasICRC reports whether the frame carries an ICRC the decode reached and
// the capture holds: not a trimmed frame (it carries none), one cut by
// the snap length (Cut), or one that did not decode. ICRCOK is its
// verdict.
func (r *Record) HasICRC() bool { return r.Err == nil && !r.Packet.Trimmed && !r.Cut }

// Captured returns how many of the frame's bytes the capture holds: Kept
// when the frame was cut and rebuilt (Cut), else those of Data.
func (r *Record) Captured() int {
	if r.Cut {
		return r.Kept
	}
	return len(r.Data)
}

// bthPresent reports whether the frame holds a whole BTH at its BTH
// offset, so its fields can be shown even when the opcode is not MRC.
func (r *Record) bthPresent() (off int, ok bool) {
	_, udp, bth := r.Packet.Offsets()
	if bth == 0 || bth+wire.BTHLen > len(r.Data) {
		return 0, false
	}
	if end := udp + int(r.Packet.UDP.Length); end < bth+wire.BTHLen {
		return 0, false
	}
	return bth, true
}

// walk visits each decoded transport header with its frame offset, like
// wire.Codec.Walk, and also the BTH of a frame whose opcode is not MRC
// (wire stops there, but the BTH is whole and worth showing).
func walk(c *wire.Codec, r *Record, fn func(h *wire.Header, off int)) {
	n := 0
	c.Walk(&r.Packet, func(h *wire.Header, off int) {
		n++
		fn(h, off)
	})
	if n > 0 {
		return
	}
	if off, ok := r.bthPresent(); ok && !r.Packet.BTH.Opcode.Valid() {
		// The codec's own description, not a copy: a copy would escape
		// to fn and allocate.
		hs := c.Headers()
		for i := range hs {
			if hs[i].Name == "BTH" {
				fn(&hs[i], off)
			}
		}
	}
}

// Each reads every frame of r, decodes it and calls fn with the record,
// which is reused from one call to the next. It stops at the end of the
// file (returning nil), at a read error, or when fn returns an error.
func (d *Decoder) Each(r *Reader, fn func(*Record) error) error {
	d.Reset()
	var f Frame
	var rec Record
	for {
		if err := r.Next(&f); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		d.Decode(&f, r.Interface(f.Interface), &rec)
		if err := fn(&rec); err != nil {
			return err
		}
	}
}

// Since returns t.Sub(start), computed from seconds and nanoseconds while
// they are less than 2^32 s apart (no overflow), without Sub's overflow
// test (an Add and an Equal). Beyond, it is Sub's saturated value.
func Since(t, start time.Time) time.Duration {
	e := NewEpoch(start)
	return e.Since(t)
}

// Epoch is a start time split into Unix seconds and nanoseconds once: a
// decoder and the judge measure every frame's time from one (Since).
type Epoch struct {
	start time.Time
	sec   int64
	nsec  int
}

// NewEpoch returns the epoch of start.
func NewEpoch(start time.Time) Epoch {
	return Epoch{start: start, sec: start.Unix(), nsec: start.Nanosecond()}
}

// Since returns t.Sub(start) for the epoch's start (pcap.Since); times
// 2^32 s or more apart take far, Sub's saturated value.
func (s *Epoch) Since(t time.Time) time.Duration {
	if ds := t.Unix() - s.sec; ds > -1<<32 && ds < 1<<32 {
		return time.Duration(ds*1e9 + int64(t.Nanosecond()-s.nsec))
	}
	return s.far(t)
}

// far is Since for times 2^32 s or more apart: Sub's saturated value.
func (s *Epoch) far(t time.Time) time.Duration { return t.Sub(s.start) }

package wire

import (
	"errors"
	"fmt"
	"strings"
)

// EVMode is how an EV reaches the wire; the names follow the OCP API's
// enum mrc_ctl_ev_fmt_mode.
type EVMode uint8

// EV wire-format modes.
const (
	// EVModeSTEV stripes the 32-bit EV over the UDP source port (EV[15:0])
	// and the low 16 bits of the IPv6 flow label (EV[31:16]) (WIRE-EV-1).
	EVModeSTEV EVMode = iota
	// EVModeUDP carries a 16-bit EV in the UDP source port only (WIRE-EV-2).
	EVModeUDP
	// EVModeSRv6 routes by an SRv6 uSID outer destination; the EV still
	// travels in the inner headers so feedback can echo it (WIRE-EV-4).
	EVModeSRv6
)

func (m EVMode) String() string {
	switch m {
	case EVModeSTEV:
		return "STEV"
	case EVModeUDP:
		return "UDP"
	case EVModeSRv6:
		return "SRV6"
	}
	return fmt.Sprintf("EVMode(%d)", uint8(m))
}

// ErrUnknownEVMode is ParseEVMode's error for a name it does not know.
var ErrUnknownEVMode = errors.New("unknown EV mode (want stev, udp or srv6)")

// ParseEVMode returns the mode a name gives, as String writes it or in
// lower case: stev, udp or srv6.
func ParseEVMode(s string) (EVMode, error) {
	for m := EVModeSTEV; m <= EVModeSRv6; m++ {
		if strings.EqualFold(s, m.String()) {
			return m, nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownEVMode, s)
}

// SplitEV returns the UDP source port and IPv6 flow label that carry ev in
// STEV mode. The flow label's top four bits are zero (WIRE-EV-1, WIRE-EV-6).
func SplitEV(ev uint32) (srcPort uint16, flowLabel uint32) {
	return uint16(ev), ev >> 16
}

// JoinEV is the inverse of SplitEV; flow-label bits 19-16 are ignored.
func JoinEV(srcPort uint16, flowLabel uint32) uint32 {
	return flowLabel&0xFFFF<<16 | uint32(srcPort)
}

// SetEV writes ev into p's UDP source port and, for IPv6 in STEV or SRv6
// mode, the inner flow label. Over IPv4 or in UDP mode only EV[15:0]
// reaches the wire (WIRE-EV-2, WIRE-EV-3).
func (p *Packet) SetEV(ev uint32, mode EVMode) {
	sp, fl := SplitEV(ev)
	p.UDP.SrcPort = sp
	if p.IsIPv6 && mode != EVModeUDP {
		p.IP6.FlowLabel = fl
	}
}

// EV returns the EV the packet carries; bits that the mode or IP version
// does not carry read as zero, as the responder zero-fills them (WIRE-EV-3).
func (p *Packet) EV(mode EVMode) uint32 {
	if p.IsIPv6 && mode != EVModeUDP {
		return JoinEV(p.UDP.SrcPort, p.IP6.FlowLabel)
	}
	return uint32(p.UDP.SrcPort)
}

// USIDAddr is a 128-bit SRv6 uSID container: a 32-bit locator block then
// up to six 16-bit uSIDs, the active one first; 0 ends the list (WIRE-EV-4).
type USIDAddr [16]byte

// MaxUSIDs is the number of uSIDs a container holds after a 32-bit locator.
const MaxUSIDs = 6

// NewUSIDAddr builds a container from a locator block and uSIDs.
func NewUSIDAddr(locator uint32, usids ...uint16) (USIDAddr, error) {
	var a USIDAddr
	if len(usids) > MaxUSIDs {
		return a, fmt.Errorf("wire: %d uSIDs, a container holds %d after a 32-bit locator (WIRE-EV-4)", len(usids), MaxUSIDs)
	}
	be.PutUint32(a[:], locator)
	for i, u := range usids {
		if u == 0 {
			return a, fmt.Errorf("wire: uSID %d is 0, which marks end of container (WIRE-EV-4)", i)
		}
		be.PutUint16(a[4+2*i:], u)
	}
	return a, nil
}

// Locator returns the 32-bit locator block.
func (a USIDAddr) Locator() uint32 { return be.Uint32(a[:]) }

// Active returns the active uSID (bits 47-32 of the address); 0 means the
// list is exhausted.
func (a USIDAddr) Active() uint16 { return be.Uint16(a[4:]) }

// Shift applies uN behaviour: the switch whose uSID is active consumes it
// by shifting the uSID part left by 16 bits and filling with zero
// (WIRE-EV-4).
func (a USIDAddr) Shift() USIDAddr {
	var r USIDAddr
	copy(r[:4], a[:4])
	copy(r[4:14], a[6:16])
	return r
}

// USIDs returns the remaining uSIDs in path order.
func (a USIDAddr) USIDs() []uint16 {
	var out []uint16
	for i := 4; i < 16; i += 2 {
		u := be.Uint16(a[i:])
		if u == 0 {
			break
		}
		out = append(out, u)
	}
	return out
}

// SRv6Template is a destination's path template for algorithmic EV→SRv6
// mapping, after the white paper §2.3: each uSID has a plane field into
// which the EV's plane number is copied, and the T1 uSID has an uplink
// field into which the EV's T0-uplink number is copied. Field positions
// are deployment configuration, not spec (WIRE-EV-4).
type SRv6Template struct {
	Locator   uint32
	USIDs     []uint16 // src T0, T1, dst T0, dst NIC downlink, ...
	T1Index   int      // which uSID is the T1 hop
	PlaneMask uint16   // bits of every uSID that hold the plane number
	// UplinkMask: bits of the T1 uSID that hold the T0 uplink number.
	UplinkMask uint16
	// EV layout: plane = ev>>PlaneShift & planeMax, uplink = ev>>UplinkShift & uplinkMax.
	PlaneShift, PlaneBits   uint8
	UplinkShift, UplinkBits uint8
}

// Plane and Uplink extract the EV fields the template uses.
func (t *SRv6Template) Plane(ev uint32) uint16 {
	return uint16(ev >> t.PlaneShift & (1<<t.PlaneBits - 1))
}

// Uplink returns the T0 uplink number carried by ev.
func (t *SRv6Template) Uplink(ev uint32) uint16 {
	return uint16(ev >> t.UplinkShift & (1<<t.UplinkBits - 1))
}

// Path returns the outer destination address for ev.
func (t *SRv6Template) Path(ev uint32) (USIDAddr, error) {
	if len(t.USIDs) > MaxUSIDs || t.T1Index < 0 || t.T1Index >= len(t.USIDs) {
		return USIDAddr{}, fmt.Errorf("wire: SRv6 template has %d uSIDs and T1 index %d (WIRE-EV-4)", len(t.USIDs), t.T1Index)
	}
	var us [MaxUSIDs]uint16
	plane, uplink := t.Plane(ev), t.Uplink(ev)
	for i, u := range t.USIDs {
		u = u&^t.PlaneMask | deposit(plane, t.PlaneMask)
		if i == t.T1Index {
			u = u&^t.UplinkMask | deposit(uplink, t.UplinkMask)
		}
		us[i] = u
	}
	return NewUSIDAddr(t.Locator, us[:len(t.USIDs)]...)
}

// deposit spreads the low bits of v over the set bits of mask, low to high.
func deposit(v, mask uint16) uint16 {
	var r uint16
	for bit := uint16(1); mask != 0; bit <<= 1 {
		low := mask & -mask
		if v&bit != 0 {
			r |= low
		}
		mask &^= low
	}
	return r
}

// Width returns the number of EV bits the mode carries on the wire
// (WIRE-EV-12): 32 for STEV and SRv6 (the echo value), 16 for UDP mode.
func (m EVMode) Width() int {
	if m == EVModeUDP {
		return 16
	}
	return 32
}

// CheckEVWidth reports an EV wider than the mode carries (WIRE-EV-12).
func CheckEVWidth(ev uint64, m EVMode) error {
	if w := m.Width(); ev>>w != 0 {
		return fmt.Errorf("wire: EV %#x is wider than the %d bits of %s mode (WIRE-EV-12)", ev, w, m)
	}
	return nil
}

// EVField is one field of a generated EV profile, as the OCP API's EV
// profile describes it: a width, an initial value, and the mask of bits
// the NIC generates (WIRE-EV-11).
type EVField struct {
	Width uint8  // bits, 1..64
	Init  uint64 // init_val
	Mask  uint64 // bits of the field that take generated bits
}

// ExpandEV builds an EV from a profile's fields and a generated value g:
// each field starts at its Init, every Mask bit is overwritten, from the
// most significant down, with the next most significant unused bit of g,
// and the fields are concatenated in order, first field most significant
// (WIRE-EV-11). The fields may total at most 64 bits.
func ExpandEV(fields []EVField, g uint64) (uint64, error) {
	total, genBits := 0, 0
	for i, f := range fields {
		if f.Width == 0 || f.Width > 64 {
			return 0, fmt.Errorf("wire: EV field %d has width %d, want 1..64 (WIRE-EV-11)", i, f.Width)
		}
		total += int(f.Width)
		genBits += bitsSet(f.Mask & widthMask(f.Width))
	}
	if total > 64 {
		return 0, fmt.Errorf("wire: EV fields total %d bits, at most 64 (WIRE-EV-12)", total)
	}
	if genBits < 64 && g>>genBits != 0 {
		return 0, fmt.Errorf("wire: generated value %#x needs more than the %d mask bits (WIRE-EV-11)", g, genBits)
	}
	var ev uint64
	k := genBits
	for _, f := range fields {
		w := int(f.Width)
		v := f.Init & widthMask(f.Width)
		for bit := w - 1; bit >= 0; bit-- {
			if f.Mask>>bit&1 != 0 {
				k--
				v = v&^(1<<bit) | (g>>k&1)<<bit
			}
		}
		if w == 64 {
			ev = v
		} else {
			ev = ev<<w | v
		}
	}
	return ev, nil
}

func widthMask(w uint8) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<w - 1
}

func bitsSet(v uint64) int {
	n := 0
	for ; v != 0; v &= v - 1 {
		n++
	}
	return n
}

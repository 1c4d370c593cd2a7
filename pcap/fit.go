package pcap

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// MaxFitEVs bounds the data-packet EVs a Fit remembers to match the
// entropy that feedback echoes; later EVs are not remembered.
const MaxFitEVs = 1 << 14

// minEchoes is how many echoed entropy values must match before a Fit
// says the EV halves look swapped.
const minEchoes = 4

// Fit tells whether a capture decodes better under another named profile
// (spec.PresetNames) than under the one selected: frames whose ICRC only
// the other preset accepts, fewer rule violations, and feedback entropy
// that echoes the data packets' EVs only with the halves swapped (AMB-23,
// AMB-90). Feed it every Record a Decoder produced with the selected
// codec, then ask Advice.
type Fit struct {
	sel     *wire.Codec
	mode    wire.EVMode
	alts    []fitAlt // every other preset's, made by makeAlts on first use
	altsOK  bool     // makeAlts ran
	frames  int
	selBad  int // rule violations under the selected profile
	selICRC int // frames whose ICRC the selected profile finds wrong
	pkt     wire.Packet
	viol    []wire.Violation // CheckHeaders' scratch
	// EVs of data packets as read in the selected order and swapped.
	evs, swapped   map[uint32]struct{}
	echo, echoSwap int // feedback entropy values found in evs, swapped
	echoes         int // feedback packets seen
}

type fitAlt struct {
	name      string
	c         *wire.Codec
	icrcFixed int // ICRC wrong under the selected profile, right under this one
	bad       int // rule violations under this profile
}

// NewFit returns a Fit for records decoded with sel (nil: wire.Default)
// in EV mode mode, comparing against every other preset.
func NewFit(sel *wire.Codec, mode wire.EVMode) *Fit {
	if sel == nil {
		sel = wire.Default
	}
	return &Fit{sel: sel, mode: mode, evs: map[uint32]struct{}{}, swapped: map[uint32]struct{}{}}
}

// makeAlts makes the other presets' codecs, once. Fit makes them when a
// record is compared under them (addAlts) or Advice names them: AdviseFile
// reads a capture that fits the selected profile without either, and
// making them (a codec per preset, each preset compared by its printed
// form) was about as much CPU as reading a small capture's frames.
func (f *Fit) makeAlts() {
	if f.altsOK {
		return
	}
	f.altsOK = true
	for _, n := range spec.PresetNames() {
		p, _ := spec.Preset(n)
		if samePresetAs(p, f.sel.Profile()) {
			continue
		}
		c, err := wire.NewCodec(p)
		if err != nil {
			continue // spec's tests keep every preset valid
		}
		f.alts = append(f.alts, fitAlt{name: n, c: c})
	}
}

// samePresetAs reports whether a and b make the same wire choices.
func samePresetAs(a, b spec.Profile) bool {
	a.Name, b.Name = "", ""
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// Add takes one record decoded with the selected codec (Check included).
func (f *Fit) Add(r *Record) {
	if !f.addSelected(r) {
		return
	}
	f.addAlts(r)
	f.addEcho(r)
}

// addSelected counts r under the selected profile, and reports whether
// Fit compares it (a record that decoded, untrimmed).
func (f *Fit) addSelected(r *Record) bool {
	if r.Err != nil || r.Packet.Trimmed {
		return false
	}
	f.frames++
	f.selBad += len(r.Violations)
	if !r.ICRCOK {
		f.selICRC++
	}
	return true
}

// altsMatter reports whether the other presets' counts can change Advice:
// a preset is preferred for the ICRCs it accepts where the selected
// profile finds them wrong, or for fewer rule violations than the
// selected profile's, so with neither so far they cannot.
func (f *Fit) altsMatter() bool { return f.selBad > 0 || f.selICRC > 0 }

// addAlts decodes and checks r under every other preset.
func (f *Fit) addAlts(r *Record) {
	f.makeAlts()
	for i := range f.alts {
		a := &f.alts[i]
		if err := a.c.Decode(r.Data, &f.pkt); err != nil {
			a.bad++
			continue
		}
		f.viol = a.c.CheckHeaders(r.Data, &f.pkt, f.viol[:0])
		a.bad += len(f.viol)
		if f.pkt.Trimmed {
			continue
		}
		// The ICRC is the costly check: computed under the other preset
		// only when the selected one found it wrong. When the selected
		// one found it right, the other preset's verdict is the same if
		// it computes the ICRC the same way, and wrong otherwise (but
		// for a 2^-32 chance).
		switch {
		case r.ICRCOK && f.sel.SameICRC(a.c):
		case r.ICRCOK:
			a.bad++
		case a.c.VerifyICRC(r.Data, &f.pkt):
			a.icrcFixed++
		default:
			a.bad++
		}
	}
}

// addEcho matches feedback entropy against the data packets' EVs in both
// orders of their halves (STEV over IPv6 only).
func (f *Fit) addEcho(r *Record) {
	p := &r.Packet
	if f.mode != wire.EVModeSTEV || !p.IsIPv6 {
		return
	}
	op := p.BTH.Opcode
	switch {
	case op.IsWrite():
		if len(f.evs) < MaxFitEVs {
			f.evs[r.EV] = struct{}{}
			f.swapped[r.EV<<16|r.EV>>16] = struct{}{}
		}
		return
	case op == wire.OpSACK || op == wire.OpNACK:
	default:
		return
	}
	e := p.SETH.Entropy
	if op == wire.OpNACK {
		e = p.NETH.Entropy
	}
	f.echoes++
	_, in := f.evs[e]
	_, sw := f.swapped[e]
	if in && !sw {
		f.echo++
	}
	if sw && !in {
		f.echoSwap++
	}
}

// HalvesSwapped reports whether feedback echoes the data packets' EVs
// only when their halves are read the other way round.
func (f *Fit) HalvesSwapped() bool {
	return f.echoSwap >= minEchoes && f.echoSwap > 2*f.echo
}

// Advice says, one line per preset, why the capture fits it better than
// the selected profile; nothing when it does not.
func (f *Fit) Advice() []string {
	if f.selBad > 0 || f.HalvesSwapped() {
		// Only these name a preset whose counts are all zero, as they
		// are when no record was compared under the other presets.
		f.makeAlts()
	}
	var out []string
	selHalves := f.sel.Profile().STEVHalves
	for _, a := range f.alts {
		var why []string
		if a.icrcFixed > 0 {
			why = append(why, fmt.Sprintf("%d frames carry ICRC errors that the %s preset accepts", a.icrcFixed, a.name))
		}
		if a.bad < f.selBad {
			why = append(why, fmt.Sprintf("it finds %d rule violations, the selected profile %d", a.bad, f.selBad))
		}
		if f.HalvesSwapped() && a.c.Profile().STEVHalves != selHalves {
			why = append(why, fmt.Sprintf("EV halves look swapped (%d of %d SACK/NACK entropy values echo data EVs only with the halves swapped)", f.echoSwap, f.echoes))
		}
		if len(why) > 0 {
			out = append(out, fmt.Sprintf("the capture fits the %s preset better (--profile %s): %s", a.name, a.name, strings.Join(why, "; ")))
		}
	}
	if len(out) == 0 && f.HalvesSwapped() {
		out = append(out, fmt.Sprintf("EV halves look swapped (%d of %d SACK/NACK entropy values echo data EVs only with the halves swapped): set stev_halves in the profile", f.echoSwap, f.echoes))
	}
	return slices.Clip(out)
}

// AdviseFile decodes the first MaxAdviseFrames frames of the capture name,
// read as Open reads it (as the judge reads captures by default: mapped,
// the first touch of each page costs more on some hosts than the copy),
// with sel in EV mode mode and returns Fit's advice,
// or an error whose cause is ErrFileChanged for a file cut short while it
// was read. A hint needs no more:
// the judge has read the whole capture already, and a second full decode
// cost more CPU than judging it.
//
// The frames are first read under the selected profile alone: the other
// presets are decoded only when a frame shows a rule violation or a wrong
// ICRC (altsMatter), reading the frames again; on a capture that fits
// the selected profile, that halves the cost.
func AdviseFile(name string, sel *wire.Codec, mode wire.EVMode) ([]string, error) {
	f := NewFit(sel, mode)
	err := f.readFile(name, sel, mode, func(rec *Record) bool {
		if f.addSelected(rec) {
			f.addEcho(rec)
		}
		return !f.altsMatter()
	})
	if err == nil && f.altsMatter() {
		f = NewFit(sel, mode)
		err = f.readFile(name, sel, mode, func(rec *Record) bool { f.Add(rec); return true })
	}
	return f.Advice(), err
}

// readFile decodes the frames of the capture name with sel and hands
// each record to add, until add returns false or MaxAdviseFrames frames
// were compared.
func (f *Fit) readFile(name string, sel *wire.Codec, mode wire.EVMode, add func(*Record) bool) error {
	r, err := Open(name)
	if err != nil {
		return err
	}
	defer r.Close()
	d := &Decoder{Codec: sel, EVMode: mode}
	err = d.Each(r, func(rec *Record) error {
		if !add(rec) || f.frames >= MaxAdviseFrames {
			return errEnough
		}
		return nil
	})
	if err == errEnough {
		err = nil
	}
	return err
}

// MaxAdviseFrames bounds the frames AdviseFile reads: enough for a
// preset's ICRC or halves to show (thousands of writes and their SACKs),
// and a small share of a judge's CPU (16,384 frames of the loss capture
// were 6 % of mrc-conform judge's).
const MaxAdviseFrames = 1 << 12

var errEnough = errors.New("pcap: enough frames for advice")

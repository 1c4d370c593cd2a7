package modelcheck

import (
	"fmt"
	"reflect"
	"sync"

	sm "github.com/openmrc/mrc/statemachine"
)

// The visited set needs a fingerprint of everything that decides a QP's
// future, not only its abstract state: statemachine.QP.StateHash leaves out
// timers, the rotation order and position, the random stream, probe flags
// and the reverse EVs, and two QPs that differ only there can behave
// differently. So the checker fingerprints the whole QP by reflection over
// its fields (reading unexported fields is allowed; nothing is written),
// which also keeps the fingerprint complete when fields are added. The rules:
//
//   - Pointers are not followed: the only pointer fields are the immutable
//     configuration shared by every clone (QP.st, evTable.set) and the step
//     context (QP.out, nil between steps). Any other pointer, map, channel,
//     function or interface field panics (TestFingerprintCoversQP), so a
//     new kind of field cannot be skipped silently.
//   - Time points are hashed relative to the current time (Never stays
//     Never): the QP's behaviour depends only on differences of time points
//     and on durations, so two states that differ by a shift of time are
//     the same state. Fields of type Time are classified by name as points
//     or durations; an unclassified one panics.
//   - The requester's per-PSN ring (txRing) is hashed for the slots in use
//     only (flags ≠ 0): the others hold stale values no code reads.
//   - Skipped: QP.now (the time of the QP's last input, step context that
//     every input overwrites before reading), evTable.rotations (a
//     statistic no code reads),
//     requester.lastFound (a lookup cache), sendWR.data (the application's
//     buffer, identical in every state) and requester.probeRound, which
//     only matters through the probe IDs in flight; those are hashed by
//     their age relative to the round (see packet.canon).
//   - A QP without congestion control (nscc.on false) hashes nscc as that
//     flag alone: nothing else in it is read.

var (
	timeType   = reflect.TypeOf(sm.Time(0))
	timePoints = map[string]bool{"sentAt": true, "timerAt": true, "holdAt": true, "stallAt": true, "revAt": true, "probeAt": true,
		"ackDue": true, "lastAdj": true, "lastMD": true, "lastE": true, "qaEnd": true}
	timeSpans = map[string]bool{"revInt": true, "baseRTT": true, "probeInt": true, "target": true, "adjPeriod": true,
		"qaThresh": true, "avgDelay": true}
	skipFields   = map[string]bool{"rotations": true, "lastFound": true, "probeRound": true, "data": true, "now": true}
	skipPointers = map[string]bool{"st": true, "set": true, "out": true}
)

// hasher is a 64-bit multiply-xorshift accumulator (deterministic across
// runs and platforms, unlike hash/maphash).
type hasher struct{ h uint64 }

func newHasher() hasher { return hasher{h: 0x9E3779B97F4A7C15} }

func (s *hasher) mix(v uint64) {
	s.h ^= v + 0x9E3779B97F4A7C15 + s.h<<6 + s.h>>2
	s.h *= 0xBF58476D1CE4E5B9
	s.h ^= s.h >> 31
}

func (s *hasher) sum() uint64 {
	h := s.h
	h ^= h >> 33
	h *= 0xFF51AFD7ED558CCD
	h ^= h >> 33
	return h
}

// qpHasher walks a QP by reflection.
type qpHasher struct {
	hasher
	now sm.Time
	// coarse leaves out the random stream and the rotation (order, pos):
	// the livelock check compares states up to the EV order.
	coarse bool
}

var coarseSkip = map[string]bool{"rng": true, "order": true, "pos": true}

var qpIndex struct {
	once       sync.Once
	probeRound []int // field index path of QP.req.probeRound
}

func probeRoundIndex() []int {
	qpIndex.once.Do(func() {
		t := reflect.TypeOf(sm.QP{})
		req, ok := t.FieldByName("req")
		if !ok {
			panic("modelcheck: statemachine.QP has no field req")
		}
		pr, ok := req.Type.FieldByName("probeRound")
		if !ok {
			panic("modelcheck: statemachine.requester has no field probeRound")
		}
		qpIndex.probeRound = append(append([]int(nil), req.Index...), pr.Index...)
	})
	return qpIndex.probeRound
}

// probeRound reads the requester's probe round of q (see packet.canon).
func probeRound(q *sm.QP) uint16 {
	return uint16(reflect.ValueOf(q).Elem().FieldByIndex(probeRoundIndex()).Uint())
}

// txEVIndex reads the profile index of the EV in q's per-PSN ring for
// psn (bits 0-10 of txRing.ev, statemachine/requester.go evIdxMask): the
// EV of the PSN's last transmission, or the EV to avoid once it is queued.
func txEVIndex(q *sm.QP, psn uint32) int {
	r := reflect.ValueOf(q).Elem().FieldByName("req").FieldByName("ring")
	i := int(psn & uint32(r.FieldByName("mask").Uint()))
	if _, ok := q.AvoidedEV(psn); !ok && q.PSNStateOf(psn) == sm.PSNLost {
		return -2 // queued, avoiding no EV (AMB-44): the model's NoEV (−1) after project's +1
	}
	return int(r.FieldByName("ev").Index(i).Uint() & (1<<11 - 1))
}

// fingerprint returns the hash of q's complete state at time now.
func fingerprint(q *sm.QP, now sm.Time) uint64 {
	h := qpHasher{hasher: newHasher(), now: now}
	h.value(reflect.ValueOf(q).Elem(), "QP")
	return h.sum()
}

// coarseFingerprint is fingerprint without the random stream and the
// rotation order and position.
func coarseFingerprint(q *sm.QP, now sm.Time) uint64 {
	h := qpHasher{hasher: newHasher(), now: now, coarse: true}
	h.value(reflect.ValueOf(q).Elem(), "QP")
	return h.sum()
}

func (h *qpHasher) time(v sm.Time, name string) {
	switch {
	case timePoints[name]:
		if v == sm.Never {
			h.mix(uint64(sm.Never))
		} else {
			h.mix(uint64(v - h.now))
		}
	case timeSpans[name]:
		h.mix(uint64(v))
	default:
		panic(fmt.Sprintf("modelcheck: Time field %q is neither a known time point nor a known duration", name))
	}
}

func (h *qpHasher) value(v reflect.Value, name string) {
	t := v.Type()
	if t == timeType {
		h.time(sm.Time(v.Int()), name)
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			h.mix(1)
		} else {
			h.mix(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		h.mix(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		h.mix(v.Uint())
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			h.value(v.Index(i), name)
		}
	case reflect.Slice:
		n := v.Len()
		h.mix(uint64(n))
		if t.Elem().Kind() == reflect.Uint8 && t.Elem() != timeType {
			b := v.Bytes()
			for i := 0; i+8 <= len(b); i += 8 {
				h.mix(uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
					uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56)
			}
			for i := n &^ 7; i < n; i++ {
				h.mix(uint64(b[i]))
			}
			return
		}
		for i := 0; i < n; i++ {
			h.value(v.Index(i), name)
		}
	case reflect.Struct:
		p := planFor(t)
		switch p.special {
		case "txRing":
			h.txRing(v)
			return
		case "nscc":
			if !v.Field(p.on).Bool() {
				h.mix(0)
				return
			}
		}
		for _, f := range p.fields {
			if h.coarse && coarseSkip[f.name] {
				continue
			}
			h.value(v.Field(f.idx), f.name)
		}
	case reflect.Pointer:
		if !skipPointers[name] {
			panic(fmt.Sprintf("modelcheck: pointer field %q of type %s is not known to be immutable", name, t))
		}
	default:
		panic(fmt.Sprintf("modelcheck: cannot fingerprint field %q of kind %s", name, v.Kind()))
	}
}

// structPlan is the cached list of a struct type's fields to hash.
type structPlan struct {
	special string // "txRing" or "nscc": handled specially
	on      int    // index of nscc.on
	fields  []fieldPlan
}

type fieldPlan struct {
	idx  int
	name string
}

var plans sync.Map // reflect.Type → *structPlan

func planFor(t reflect.Type) *structPlan {
	if p, ok := plans.Load(t); ok {
		return p.(*structPlan)
	}
	p := &structPlan{}
	if t.PkgPath() == "github.com/openmrc/mrc/statemachine" && (t.Name() == "txRing" || t.Name() == "nscc") {
		p.special = t.Name()
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Name == "on" {
			p.on = i
		}
		if !skipFields[f.Name] {
			p.fields = append(p.fields, fieldPlan{idx: i, name: f.Name})
		}
	}
	plans.Store(t, p)
	return p
}

// The requester's per-PSN flag bits (statemachine/window.go; pinned by
// TestTxRingFlagLayout).
const (
	txInFlight = 1 << 0
	txSACKed   = 1 << 1
	txLost     = 1 << 2
	txHold     = 1 << 4
)

// txRing: mask, sentAt []Time, ev []uint16, fl []uint8, and sacked, a
// bitset mirroring fl's txSACKed bits (not hashed again). Only slots whose
// flags are non-zero are live, and a slot's sentAt is read only while the
// PSN is in flight (its timer), held back (its hold-off) or, for an RTT
// sample, SACKed; for a PSN queued for retransmission it is stale.
func (h *qpHasher) txRing(v reflect.Value) {
	fl, ev, at := v.FieldByName("fl"), v.FieldByName("ev"), v.FieldByName("sentAt")
	if fl.Len() != ev.Len() || fl.Len() != at.Len() || v.NumField() != 5 || v.FieldByName("sacked").Len()*64 != fl.Len() {
		panic("modelcheck: txRing layout changed")
	}
	h.mix(v.FieldByName("mask").Uint())
	for i := 0; i < fl.Len(); i++ {
		f := fl.Index(i).Uint()
		if f == 0 {
			continue
		}
		h.mix(uint64(i) | f<<32)
		h.mix(ev.Index(i).Uint())
		if f&(txInFlight|txSACKed|txHold) != 0 {
			h.mix(uint64(sm.Time(at.Index(i).Int()) - h.now))
		}
	}
}

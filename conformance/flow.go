package conformance

import (
	"fmt"
	"hash/maphash"
	"net/netip"
	"slices"
	"unsafe"

	"github.com/openmrc/mrc/wire"
	"github.com/openmrc/mrc/wire/evstate"
)

// psnAfter reports whether PSN a follows b (mod 2^24, WIRE-BTH-4).
func psnAfter(a, b uint32) bool { return wire.PSNDiff(a, b) > 0 }

// psnDist is (a − b) mod 2^24.
func psnDist(a, b uint32) uint32 { return (a - b) & wire.PSNMask }

// flowKey names one direction of data on a QP pair: the requester node,
// the responder node and the responder's QP number. A flow first met
// through feedback knows only the low 16 bits of the QPN (partial).
type flowKey struct {
	req, rsp string
	qpn      uint32
	partial  bool
}

func (k flowKey) String() string {
	p := ""
	if k.partial {
		p = "~"
	}
	return fmt.Sprintf("%s→%s qp %s0x%06x", k.req, k.rsp, p, k.qpn)
}

// point is the judge's state for one capture point.
type point struct {
	name         string
	num          int // its place among the engine's points (hashes rowSlot)
	n            int
	lastNs       int64
	nonMonotonic bool
	curPlane     int
	curIface     int // the capture-wide number of the current frame's interface
	curFlow      *flow
	lastData     [dataSlots]*flow // flows dataFlow returned, by their QPN's low bits
	atNode       string           // the node capture.points places the point at ("" none)
	atNodeSet    bool
	lost         uint64 // frames its interfaces' statistics say the capture lost
	// late counts its frames judged out of timestamp order (merger.onLate):
	// a packet judged missing there, or judged after what followed it, may
	// be one of them.
	late uint64
	// mixed names an interface of the point that carries two capture
	// points' frames ("" none; mixedInterfaces).
	mixed string
	// split says which interface of the point, and of another point, have
	// one name and followed one another in time ("" none; ifaceTable.split).
	split string
	// cutTo counts, by responder, the writes the capture's snap length cut
	// after their headers (cutWrite): what the responder did on them is
	// not judged there (unseen.cut). At most MaxNodes entries.
	cutTo map[string]int

	flows map[flowKey]*flow
	pairs map[[2]string][]*flow // (req, rsp) → flows
	// The pairs entry feedbackFlow looked up last, valid while pairsGen
	// (counting addFlow's additions) is lastPairGen.
	lastPair              [2]string
	lastCands             []*flow
	pairsGen, lastPairGen int
	ep                    map[epKey]*epReq
	psu                   map[[2]string]psuState // (from, to) → latest port status update
	full                  bool
	// badFirst holds bad-ICRC writes of connections the point has no
	// flow for yet, for the flow to take when it starts (takeBadFirst).
	badFirst [4]badWrite
	// badProbes are the latest probes seen with a bad ICRC, a ring (the
	// probe's flow may not exist yet: its answer can start it).
	badProbes [8]badProbe
	badProbeN int
	// untiedSrc is the last source address tiePlanes found named and not
	// declared: a write from it ties nothing (the invalid address: none).
	untiedSrc netip.Addr
}

// badWrite is a write seen with a bad ICRC before its connection's flow
// existed.
type badWrite struct {
	req, rsp       string
	qpn, psn       uint32
	frame, payload int
}

func newPoint(name string) *point {
	return &point{name: name, flows: map[flowKey]*flow{}, pairs: map[[2]string][]*flow{}, ep: map[epKey]*epReq{}, psu: map[[2]string]psuState{}}
}

// capNode returns the node the PICS's capture.points places the point at,
// "" when none (looked up once).
func (pt *point) capNode(p *PICS) string {
	if !pt.atNodeSet {
		pt.atNode, pt.atNodeSet = p.Capture.Points[pt.name], true
	}
	return pt.atNode
}

// knownQP reports whether some flow at this point uses QP number q.
func (pt *point) knownQP(q uint32) bool {
	for k, f := range pt.flows {
		if k.qpn == q || (f.haveReqQPN && f.reqQPN == q) {
			return true
		}
	}
	return false
}

// psnInfo is the requester-side record of one PSN.
type psnInfo struct {
	firstFrame, lastFrame int
	lastNs                int64
	lastEV                uint32
	sends                 int
	hdrFP                 uint64 // its payload's identity is psnTable.payload
	ackSel                bool
	ackFrame              int
	ackNs                 int64
	loss                  signal // loss evidence since the last send
	nack                  signal // last NACK naming it since the last send
}

type signal struct {
	kind   uint8 // 0 none, sigNACK, sigGap
	frame  int
	ns     int64
	ev     uint32
	reason wire.NACKReason
}

const (
	sigNACK = 1
	sigGap  = 2
)

type unaEvent struct {
	una   uint32
	ns    int64
	frame int
}

type badEV struct {
	since  int64         // data on the EV from this time is a violation
	frame  int           // the frame that retired it
	cause  evstate.Cause // evstate.CauseTimeout: retired by a timeout (EV-ST-5), else by a SACK (EV-ST-4)
	unsure bool          // the ev_min_active floor may have kept it in use
	revive int           // a probe answer on it that had a bad ICRC (0 none), which may have revived it
}

type wimmOpen struct {
	firstNs int64
	lastPSN uint32
	frame   int
	doneNs  int64
	done    bool
}

type pendingNACK struct {
	frame  int
	ns     int64
	reason wire.NACKReason
}

func (p pendingNACK) trim() bool {
	return p.reason == wire.NACKTrimmed || p.reason == wire.NACKTrimmedLastHop
}

// putNACK records pn as the NACK waiting for PSN q's resend.
func (fl *flow) putNACK(q uint32, pn pendingNACK) {
	old, had := fl.nackPend[q]
	fl.nackPend[q] = pn
	switch wasTrim := had && old.trim(); {
	case pn.trim() && !wasTrim:
		i, _ := slices.BinarySearch(fl.nackTrims, q)
		fl.nackTrims = slices.Insert(fl.nackTrims, i, q)
	case !pn.trim() && wasTrim:
		fl.dropTrim(q)
	}
}

// delNACK forgets the NACK waiting for PSN q and returns it (zero when
// none waits).
func (fl *flow) delNACK(q uint32) pendingNACK {
	pn, had := fl.nackPend[q]
	if had {
		delete(fl.nackPend, q)
		if pn.trim() {
			fl.dropTrim(q)
		}
	}
	return pn
}

// dropTrim takes q out of nackTrims.
func (fl *flow) dropTrim(q uint32) {
	if i, ok := slices.BinarySearch(fl.nackTrims, q); ok {
		fl.nackTrims = slices.Delete(fl.nackTrims, i, i+1)
	}
}

// oldestTrimDue returns the lowest PSN number of a trimmed packet whose NACK
// waits, that comes before psn and was NACKed by due at the latest: the
// candidates are PSN numbers of one or two ascending runs of nackTrims, so
// the first one due is the answer and none after it is visited.
func (fl *flow) oldestTrimDue(psn uint32, due int64) (uint32, bool) {
	// Before psn: psn−2^23+1 to psn−1, modulo 2^24 (psnAfter).
	start := (psn - 1<<23 + 1) & wire.PSNMask
	runs := [2][2]uint32{{start, psn}, {psn, psn}}
	if start > psn {
		runs = [2][2]uint32{{0, psn}, {start, wire.PSNMask + 1}}
	}
	for _, r := range runs {
		i, _ := slices.BinarySearch(fl.nackTrims, r[0])
		for ; i < len(fl.nackTrims) && fl.nackTrims[i] < r[1]; i++ {
			if q := fl.nackTrims[i]; fl.nackPend[q].ns <= due {
				return q, true
			}
		}
	}
	return 0, false
}

type psuState struct {
	mask  uint32
	ns    int64
	frame int
}

// arrival is one write or probe as it reached the responder's capture point.
type arrival struct {
	psn        uint32
	ev         uint32
	frame      int
	ns         int64
	ts         uint16
	hasTS      bool
	ce         bool
	trimmed    bool
	lastHop    bool
	valid      bool
	payload    int
	probe      bool
	probeID    uint16
	plane      int
	inWindow   bool
	duplicate  bool
	needAnswer bool
	discarded  bool // failed a check that makes the responder discard it
	badICRC    bool // seen with a bad ICRC: its receiver may have had it whole or not

	seq, prevSeq uint64 // in the flow's recent ring: this arrival's and its PSN's previous one's
}

// badArrival is a PSN seen arriving only in packets its responder
// discards: frame is the latest such copy; icrc the latest whose ICRC was
// bad (0 none), which the responder may have had whole after all, and
// payload its payload bytes.
type badArrival struct {
	frame, icrc, payload int
}

// badProbe is a probe seen with a bad ICRC, which the responder may have
// had whole and answered.
type badProbe struct {
	req, rsp string
	qpn      uint32
	id       uint16
	frame    int
}

type heldWIMM struct {
	lastPSN uint32
	frame   int
}

type rcumEvent struct {
	rcum  uint32
	ns    int64
	bytes int64
}

// msgState assembles messages from first transmissions in PSN order.
type msgState struct {
	active    bool
	msn       uint16
	rqmsn     uint16
	firstPSN  uint32
	nextPSN   uint32
	va0       uint64
	rkey      uint32
	dmaLen    uint32
	bytes     uint64
	bytesOK   bool   // no write of the message so far was trimmed
	sizeSeen  bool   // a write of the message so far had its size reported (sizeFault)
	dmaSeen   bool   // ... its payload beyond dma_length (sizeDMA)
	stride    uint64 // the second packet's va less the first's (msgMTUs)
	firstFr   int
	firstNs   int64
	havePrev  bool
	prevMSN   uint16
	prevRQMSN uint16
	prevIMM   bool
	prevFrame int
}

// flow is the state of one connection direction at one capture point:
// the requester's view (what it sent and what feedback reached it) and
// the responder's view (what arrived and what it answered).
type flow struct {
	key        flowKey
	reqQPN     uint32 // the requester's QP, as feedback addresses it
	haveReqQPN bool
	qp         qpView // what the traffic says of the requester's QP (qpcheck.go)

	// Summary.
	firstFrame, lastFrame                                 int
	writes, retransmits, trimmed, sacks, nacks, acks, prb int
	planes                                                map[int]bool
	planeBits                                             uint64 // planes touch recorded, as bits (-1 is bit 63)
	evs                                                   map[uint32]bool
	capped                                                bool

	// copies counts the flow's first transmissions seen again as they
	// were, by interface (countCopy); copyAt[g] is 1 + the index in
	// copies of interface g's count (0: none yet).
	copies []ifaceCopies
	copyAt [MaxInterfaces]uint16

	// Requester side.
	psns        psnTable
	markedTo    uint32 // SACK loss marks are current up to here (sackAtRequester)
	haveMarked  bool
	anchored    bool
	haveMax     bool
	maxSent     uint32
	startKnown  bool
	firstPSN    uint32
	haveUna     bool
	una         uint32
	unaHist     []unaEvent
	bad         map[uint32]badEV
	maybeBad    evTimes // EVs whose packets SACK gaps show lost, and when: a requester may retire them on that inference too
	wimm        []wimmOpen
	fatalNs     int64
	fatalFrame  int
	fatal       bool
	retryEvents int
	exhaustedNs int64
	exhausted   bool
	nackPend    map[uint32]pendingNACK // by PSN; changed by putNACK and delNACK only
	nackTrims   []uint32               // the PSNs of nackPend's trimmed packets (pendingNACK.trim), ascending
	lastWriteNs int64
	lastNewNs   int64
	dynMPR      []unaEvent // (mpr, time) reusing unaEvent.una for the value
	msg         msgState
	mtu         int // the path MTU the connection is seen to use (payloadSize)

	// Responder side.
	rKnown     bool
	rStart     bool // baseline from the QP's first PSN (claims fully checked)
	rcum       uint32
	arrived    arrTable
	arrFree    []*arrival // arrivals out of arrived, for reuse
	refused    map[uint32]int
	badArr     map[uint32]badArrival
	trimArr    map[uint32]int
	recent     []arrival      // ring of the last recentArrivals writes
	recentSeq  uint64         // arrivals pushed
	recentIdx  psnMap[uint64] // PSN → seq of its latest arrival in recent
	rcumHist   []rcumEvent
	rcumBack   int // events of rcumHist earlier than the one before them (frames out of time order)
	rcumLast   int // the index rcumAt returned last
	bytes      int64
	lastCack   uint32
	haveCack   bool
	needSACK   psnMap[needSACK] // arrivals a SACK must answer at once (RSP-SACK-5), by PSN: no hash per arrival
	trimPend   map[uint32]arrival
	oorPend    map[uint32]arrival
	ackReq     ackReqSet
	ackDue     map[uint32]int64 // ack_req PSNs the cumulative point stepped over, and when
	rGuess     bool             // the baseline is a guess from the QP's first message, not yet confirmed
	rBase      uint32           // the baseline cumulative point
	rspPKey    uint16           // the responder's P_Key, from its own packets
	haveRspKey bool
	probes     []arrival
	held       []heldWIMM
	wimmExcess map[uint32]arrival
	lastFbNs   int64
	haveFb     bool
	preBase    map[uint32]bool
	// preEnd: the lowest first transmission seen arriving before the
	// baseline, or the first one after it (havePreEnd). A requester sends
	// new PSNs in order, so in a capture not from QP start a PSN after the
	// baseline and before preEnd was sent before the capture began and
	// may have arrived unseen (preCapture).
	preEnd     uint32
	havePreEnd bool
	// unseenPay counts the PSNs taken as arrived on the responder's word
	// whose payload the capture did not show (adoptUnseen, resyncCum):
	// bytes lacks their payload, at most a path MTU each.
	unseenPay int
	// The latest feedback (SACK, NACK, ACK) seen with a bad ICRC, which
	// may be an answer or a loss signal (badicrc.go); frame 0: none.
	badFbFrame int
	badFbNs    int64

	tl *tlState // timeline ring

	// own are the states the checks keep of their own on the connection
	// (check.state), by slot, each made on its check's first use.
	own [maxConnStates]checkState
	// ownP holds the pointer of each state made in own, by stateSlot.i
	// (1 + its index in own), read by connState.of as its type.
	ownP [maxConnStates + 1]unsafe.Pointer

	evSeen  [evSeenSlots]uint32 // EVs recorded in evs, plus one (addEV)
	keyName string              // key.String(), for findings (name); "" when the key changed
}

// name returns the flow's key as findings name their connection, built
// once per key (a partial flow's key is completed later).
func (f *flow) name() string {
	if f.keyName == "" {
		f.keyName = f.key.String()
	}
	return f.keyName
}

const recentArrivals = 1024

func newFlow(k flowKey, frame int) *flow {
	return &flow{key: k, firstFrame: frame, lastFrame: frame,
		planes: map[int]bool{}, evs: map[uint32]bool{},
		bad:      map[uint32]badEV{},
		nackPend: map[uint32]pendingNACK{},
		refused:  map[uint32]int{}, badArr: map[uint32]badArrival{}, trimArr: map[uint32]int{},
		trimPend: map[uint32]arrival{}, oorPend: map[uint32]arrival{},
		ackReq: ackReqSet{m: map[uint32]arrival{}}, ackDue: map[uint32]int64{}, wimmExcess: map[uint32]arrival{}, preBase: map[uint32]bool{},
		arrived: arrTable{bounded: true},
	}
}

// dataFlow returns the flow of a packet sent by req to QP qpn of rsp,
// creating it (or completing a partial one) as needed; nil when the point
// tracks too many flows.
func (e *engine) dataFlow(pt *point, req, rsp string, qpn uint32) *flow {
	slot := &pt.lastData[qpn%dataSlots]
	if f := *slot; f != nil && f.key.qpn == qpn && !f.key.partial && sameString(f.key.req, req) && sameString(f.key.rsp, rsp) {
		return f // a recent data packet's flow: no key hashed, names compared by pointer first
	}
	k := flowKey{req: req, rsp: rsp, qpn: qpn}
	if f := pt.flows[k]; f != nil {
		*slot = f
		return f
	}
	pk := flowKey{req: req, rsp: rsp, qpn: qpn & 0xFFFF, partial: true}
	if f := pt.flows[pk]; f != nil {
		delete(pt.flows, pk)
		f.key, f.keyName = k, ""
		pt.flows[k] = f
		pt.takeBadFirst(e, f)
		return f
	}
	return e.addFlow(pt, k)
}

// recentData returns the flow dataFlow returns when it is a recent data
// packet's and its names are the same strings as req and rsp (most
// writes), else nil: a test that inlines, before the call.
func (pt *point) recentData(req, rsp string, qpn uint32) *flow {
	if f := pt.lastData[qpn%dataSlots]; f != nil && f.key.qpn == qpn && !f.key.partial && sameData(f.key.req, req) && sameData(f.key.rsp, rsp) {
		return f
	}
	return nil
}

// dataSlots is how many flows a point keeps for dataFlow to find without
// a map lookup, one per QPN modulo dataSlots: a capture's connections
// take turns (an incast capture's seven), which the last flow alone
// missed.
const dataSlots = 8

func (e *engine) addFlow(pt *point, k flowKey) *flow {
	if len(pt.flows) >= MaxFlowsPerPoint || e.flowsTotal >= MaxFlows {
		if !pt.full {
			pt.full = true
			e.hitBound(fmt.Sprintf("more than %d connections; the others are not judged", MaxFlows))
		}
		return nil
	}
	e.flowsTotal++
	f := newFlow(k, e.frameNo)
	pt.flows[k] = f
	if !k.partial {
		pt.takeBadFirst(e, f)
	}
	pr := [2]string{k.req, k.rsp}
	pt.pairs[pr] = append(pt.pairs[pr], f)
	pt.pairsGen++
	return f
}

// feedbackFlow finds the flow that feedback sent by rsp to QP reqQPN of
// req answers. spdcid (when has) is the responder's QPN bits 15:0. The
// second result reports whether spdcid disagreed with the flow found.
func (e *engine) feedbackFlow(pt *point, rsp, req string, reqQPN uint32, spdcid uint16, has bool) (*flow, bool) {
	if !sameString(pt.lastPair[0], req) || !sameString(pt.lastPair[1], rsp) || pt.lastPairGen != pt.pairsGen || pt.lastCands == nil {
		pr := [2]string{req, rsp}
		pt.lastPair, pt.lastCands, pt.lastPairGen = pr, pt.pairs[pr], pt.pairsGen
	}
	cands := pt.lastCands
	var pick *flow
	if has {
		for _, f := range cands {
			if uint16(f.key.qpn) == spdcid {
				if pick != nil {
					pick = nil
					break
				}
				pick = f
			}
		}
	}
	if pick == nil {
		n := 0
		for _, f := range cands {
			if f.haveReqQPN && f.reqQPN == reqQPN {
				pick = f
				n++
			}
		}
		if n > 1 {
			pick = nil
		}
	}
	if pick == nil && len(cands) == 1 {
		pick = cands[0]
	}
	if pick == nil {
		if !has {
			return nil, false
		}
		pick = e.addFlow(pt, flowKey{req: req, rsp: rsp, qpn: uint32(spdcid), partial: true})
		if pick == nil {
			return nil, false
		}
	}
	if !pick.haveReqQPN {
		pick.reqQPN, pick.haveReqQPN = reqQPN, true
	}
	return pick, has && uint16(pick.key.qpn) != spdcid
}

func (f *flow) touch(frame, plane int) {
	f.lastFrame = frame
	var bit uint64 // planes 0-62 and -1 (bit 63); others always go to the map
	switch {
	case plane >= 0 && plane < 63:
		bit = 1 << plane
	case plane == -1:
		bit = 1 << 63
	}
	if f.planeBits&bit != 0 {
		return // recorded already: no map write per frame
	}
	f.planeBits |= bit
	if len(f.planes) < 64 {
		f.planes[plane] = true
	}
}

// addEV records that flow f used EV ev, within MaxEVsPerFlow (roomIn
// notes the bound reached). evSeen, a small open-addressed set of the
// EVs recorded in evs (ev + 1; 0 is an empty slot), spares the map access
// of each one seen before: a connection sprays over a few hundred EVs,
// more than a direct-mapped cache of this size holds apart. Slots are
// never emptied, so an EV whose probe run was full when first seen is
// never found in the set and keeps taking the map lookup.
func (e *engine) addEV(f *flow, ev uint32) {
	if k := ev + 1; k != 0 {
		h := (ev * 0x9e3779b1) >> (32 - evSeenBits)
		for i := uint32(0); i < evSeenProbes; i++ {
			c := &f.evSeen[(h+i)&(evSeenSlots-1)]
			if *c == k {
				return
			}
			if *c == 0 {
				if e.roomIn(len(f.evs), MaxEVsPerFlow) {
					f.evs[ev] = true
					*c = k
				}
				return
			}
		}
	}
	if _, ok := f.evs[ev]; !ok && e.roomIn(len(f.evs), MaxEVsPerFlow) {
		f.evs[ev] = true
	}
}

// evSeenSlots is the size of a flow's set of EVs recorded (addEV), and
// evSeenProbes the slots a lookup tries.
const (
	evSeenBits   = 9
	evSeenSlots  = 1 << evSeenBits
	evSeenProbes = 8
)

// headerFP is the fingerprint of the header fields of a write that a
// retransmission must repeat (opcode, ack_req, se, ts, P_Key, dest_qp,
// MSN, RQMSN, RETH, ImmDt; REQ-PSN-2); payloadID pins the payload.
func headerFP(p *wire.Packet) uint64 {
	b := func(v bool) uint64 {
		if v {
			return 1
		}
		return 0
	}
	w0 := uint64(p.BTH.Opcode) | b(p.BTH.AckReq)<<8 | b(p.BTH.SE)<<9 | b(p.BTH.TSPresent)<<10 | uint64(p.BTH.PKey)<<16 | uint64(p.BTH.DestQP)<<32
	w1 := uint64(p.METH.MSN) | uint64(p.METH.RQMSN)<<16 | uint64(p.ImmDt)<<32
	w2 := uint64(p.RETH.RKey) | uint64(p.RETH.DMALength)<<32
	return mix64(mix64(mix64(mix64(fpKey, w0), w1), w2), p.RETH.VA)
}

// fpKey keys the header fingerprint like fpSeed the payload's.
var fpKey = maphash.Comparable(fpSeed, 0)

// mix64 folds v into h (the splitmix64 finalizer over h xor v).
func mix64(h, v uint64) uint64 {
	h ^= v
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

func u32p(v uint32) *uint32 { return &v }

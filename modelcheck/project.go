package modelcheck

import (
	"fmt"
	"sort"
	"strings"

	sm "github.com/openmrc/mrc/statemachine"
)

// The abstract projection shared with the TLA+ model (tla/MRC.tla): one
// direction of traffic, A's requester and EV table and B's responder, in
// the model's variables and encoding. PSNs are model PSNs (Go PSN − SQ_PSN,
// here equal); EV k of the model is the k-th EV of the profile (0x100 → 1,
// 0x101 → 2).
//
//	qpState  A.State()                               "RTS" | "ERROR"
//	posted   WRs A has posted
//	nxt      A.NextPSN()
//	una      A.CumulativeACK() + 1 (the model's una is exclusive)
//	inflight, sacked, lost   A.PSNStateOf(p) for p in [una, nxt)
//	txEV     for p in [una, nxt): the EV of p's last transmission, or the
//	         EV its NACK or timeout named (the requester's per-PSN ring,
//	         read by reflection), or NoEV once its stall timer expired
//	         (A.AvoidedEV, AMB-44)
//	retries  A.Retries()
//	sndOK    A's successful send completions
//	evState  A.EVStateOf(EV k)
//	rspErr   B.State() == ERROR
//	epsn     B.ResponderCumulativeACK() + 1
//	rbits    B.AbstractState().Received (PSNs received beyond cack)
//	expRQ    B.AbstractState().ExpRQMSN (WriteIMMs released)
//	rcvCQ    length: WriteIMM receive completions B wrote
//
// Left out: the network (the model has no reverse-path probes, and the Go
// SACK carries more than the model's), the ghost and budget variables,
// retx, lossScan, probing and probeOK, held and early, ecnRun and failed.

// AbstractVars lists the projected variables, in the order of Abstract's
// fields.
var AbstractVars = []string{"qpState", "posted", "nxt", "una", "inflight", "sacked", "lost", "txEV", "retries", "sndOK",
	"evState", "rspErr", "epsn", "rbits", "expRQ", "rcvCQ"}

// Abstract is one projected state.
type Abstract struct {
	QPState                string
	Posted, Nxt, Una       int
	Inflight, Sacked, Lost []int
	TxEV                   []int // model EV of PSNs una .. nxt-1
	Retries, SndOK         int
	EVState                []string // EV 1, 2, ...
	RspErr                 bool
	Epsn                   int
	Rbits                  []int
	ExpRQ, RcvCQ           int
}

// Key is the canonical text of a (sets sorted).
func (a Abstract) Key() string {
	set := func(s []int) string {
		s = append([]int(nil), s...)
		sort.Ints(s)
		p := make([]string, len(s))
		for i, v := range s {
			p[i] = fmt.Sprint(v)
		}
		return "{" + strings.Join(p, ",") + "}"
	}
	tx := make([]string, len(a.TxEV))
	for i, e := range a.TxEV {
		tx[i] = fmt.Sprint(e)
	}
	return fmt.Sprintf("qp=%s posted=%d nxt=%d una=%d inflight=%s sacked=%s lost=%s txEV=<%s> retries=%d sndOK=%d ev=%s rspErr=%v epsn=%d rbits=%s expRQ=%d rcvCQ=%d",
		a.QPState, a.Posted, a.Nxt, a.Una, set(a.Inflight), set(a.Sacked), set(a.Lost), strings.Join(tx, ","), a.Retries, a.SndOK,
		strings.Join(a.EVState, ","), a.RspErr, a.Epsn, set(a.Rbits), a.ExpRQ, a.RcvCQ)
}

func (c *checker) project(w *world) Abstract {
	q, r := w.qp[0], w.qp[1]
	a := Abstract{QPState: "RTS", Posted: int(w.posted[0]), Nxt: int(q.NextPSN()), Una: int(q.CumulativeACK()+1) & 0xFFFFFF,
		Retries: q.Retries(), SndOK: int(w.g[0].sendOK), RspErr: r.State() == sm.StateError,
		Epsn: int(r.ResponderCumulativeACK()+1) & 0xFFFFFF, RcvCQ: int(w.g[0].immDone)}
	if q.State() == sm.StateError {
		a.QPState = "ERROR"
	}
	for p := a.Una; p < a.Nxt; p++ {
		a.TxEV = append(a.TxEV, txEVIndex(q, uint32(p))+1)
		switch q.PSNStateOf(uint32(p)) {
		case sm.PSNInFlight:
			a.Inflight = append(a.Inflight, p)
		case sm.PSNSACKed:
			a.Sacked = append(a.Sacked, p)
		case sm.PSNLost:
			a.Lost = append(a.Lost, p)
		}
	}
	for _, v := range c.evs {
		st, _ := q.EVStateOf(v)
		a.EVState = append(a.EVState, st.String())
	}
	ab := r.AbstractState()
	for _, p := range ab.Received {
		a.Rbits = append(a.Rbits, int(p))
	}
	a.ExpRQ = int(ab.ExpRQMSN)
	return a
}

// Reachable explores cfg like Check, but past violations (Result.Violation
// is the first one found), and returns the set of projected states of
// every distinct state reached (keyed by Abstract.Key), for the comparison
// with the TLA+ model's reachable states.
func Reachable(cfg Config) (map[string]Abstract, *Result, error) {
	set := map[string]Abstract{}
	res, err := check(cfg, func(c *checker, w *world) {
		a := c.project(w)
		set[a.Key()] = a
	}, true)
	return set, res, err
}

package active

import (
	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// UNEXP_EVENT naming a selectively acknowledged PSN (LR-NACK-4, LR-NACK-6,
// AMB-100): a responder that finds no receive WR names the WriteIMM whose
// delivery failed, which the requester may hold SACKed already.

func init() { addCases(unexpCases) }

func unexpCases() {
	register(Case{Role: RoleRequester, Run: reqUnexpSACKed, Case: conformance.Case{
		ID: "MRC-LR-NACK-105", Title: "UNEXP_EVENT naming a selectively acknowledged PSN fails the QP",
		Assertion:    "An UNEXP_EVENT NACK whose nack_psn was sent and is not cumulatively acknowledged fails the QP even when a SACK's bitmap acknowledged that PSN: no retry, the WR completes with REM_OP_ERR.",
		Requirements: []conformance.RequirementID{"LR-NACK-4", "CMP-ERR-2", "QP-ST-10"},
		Level:        spec.Must,
		Steps: []string{"Have the IUT post a two-packet write; drop its first packet, let the second through (the tester SACKs it by the bitmap).",
			"Send an UNEXP_EVENT NACK naming the second packet's PSN.",
			"Poll the completion and query the QP."},
		Pass: "ERROR, WR 1 REM_OP_ERR", Fail: "the NACK ignored: the QP still in RTS, or another status",
	}})
}

func reqUnexpSACKed(t *T) {
	tim := t.s.tim
	c := t.NewConn(ConnOptions{})
	second := wire.PSNAdd(c.SQPSN, 1)
	var got *RxFrame
	c.In = func(f *RxFrame) Impair {
		switch {
		case !isData(f):
		case f.Pkt.BTH.PSN == c.SQPSN:
			return Impair{Drop: true}
		case f.Pkt.BTH.PSN == second && got == nil:
			got = f
		}
		return Impair{}
	}
	c.Post(1, control.OpRDMAWrite, 2*1024, 0)
	c.Run(t.Now()+tim.Transfer, func() bool { return got != nil })
	if got == nil {
		t.Inconclusive("the write's second packet (PSN %d) never arrived", second)
		return
	}
	c.Run(t.Now()+tim.Reaction, nil) // the tester's SACK of it reaches the IUT
	c.NACK(second, got.EV, wire.NACKUnexpEvent, got.Plane)
	comps := c.WaitSends(1, tim.Transfer)
	st := c.QueryQP()
	t.Check(st.State == control.StateError, "LR-NACK-4", At(got), "ERROR after UNEXP_EVENT naming the SACKed PSN", "state %s", st.State)
	if t.Check(len(comps) == 1, "CMP-ERR-2", Evidence{}, "one send completion", "%d: %+v", len(comps), comps) {
		t.Check(comps[0].WRID == 1 && comps[0].Status == control.WCRemOpErr, "CMP-ERR-2", Evidence{}, "WR 1 REM_OP_ERR",
			"WR %d %s", comps[0].WRID, comps[0].Status)
	}
}

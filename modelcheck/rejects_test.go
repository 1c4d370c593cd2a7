package modelcheck

import (
	"strings"
	"testing"

	sm "github.com/openmrc/mrc/statemachine"
)

// rejectConfigs are the configurations the rejection check explores:
// together they put every kind of packet (data, probes, SACKs, NACKs of
// each recoverable reason, ACKs) in flight to both QPs, in RTS and in
// ERROR.
func rejectConfigs(t *testing.T) []Config {
	var cs []Config
	for _, c := range Configurations() {
		switch c.Name {
		case "trim", "resource-nack", "pathfail-retry-exhausted", "bidirectional", "dynamic-mpr":
			cs = append(cs, c)
		}
	}
	if len(cs) != 5 {
		t.Fatalf("found %d of the 5 rejection configurations", len(cs))
	}
	return cs
}

// TestInvalidInputsInert: in every reachable state of the configurations,
// every invalid API call is refused and every corrupted packet ignored,
// with no effect on the QP (REQ-OP-1, EV-ST-9, QP-ATTR-1, CC-RSP-3,
// MPR-DYN-2, RSP-RCV-1, WIRE-BTH-12, LR-NACK-7, LR-SACK-1).
func TestInvalidInputsInert(t *testing.T) {
	for _, c := range rejectConfigs(t) {
		t.Run(c.Name, func(t *testing.T) {
			r, err := CheckRejections(c)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d states, %d invalid inputs, %v", r.Config, r.States, r.Inputs, r.Elapsed.Round(1e6))
			for _, f := range r.Failures {
				t.Error(f)
			}
			if r.Inputs < 10*r.States {
				t.Errorf("only %d inputs over %d states", r.Inputs, r.States)
			}
		})
	}
}

// TestRejectionCheckCatchesHalfApplied shows the check failing: a
// "rejection" that changes the QP before it errs (here: a controller
// call that does move an EV) is reported, as is an input that is
// accepted.
func TestRejectionCheckCatchesHalfApplied(t *testing.T) {
	saved := rejections
	defer func() { rejections = saved }()
	rejections = []rejection{
		{"half-applied", "TEST", func(q *sm.QP, now sm.Time, ev uint32, out *sm.Output) error {
			_ = q.SetEVState(now, ev, sm.EVDenied, out)
			return q.SetReceivePenalty(200, false)
		}, nil, ""},
		{"accepted", "TEST", func(q *sm.QP, _ sm.Time, _ uint32, _ *sm.Output) error {
			return q.SetReceivePenalty(1, false)
		}, nil, ""},
	}
	c := rejectConfigs(t)[0]
	r, err := CheckRejections(c)
	if err != nil {
		t.Fatal(err)
	}
	var half, acc bool
	for _, f := range r.Failures {
		half = half || strings.Contains(f, "half-applied") && strings.Contains(f, "state changed")
		acc = acc || strings.Contains(f, "accepted (TEST)") && strings.Contains(f, ": accepted")
	}
	if !half || !acc {
		t.Errorf("the check missed a seeded bug (half-applied %v, accepted %v): %q", half, acc, r.Failures)
	}
}

// TestValidationCheckCanFail: a "bad" configuration that is in fact valid,
// and a bad one whose error names another field, are both reported.
func TestValidationCheckCanFail(t *testing.T) {
	savedC, savedA := badConfigs, badAttrs
	defer func() { badConfigs, badAttrs = savedC, savedA }()
	badConfigs = []badConfig{
		{"MaxSendWR", func(_ *sm.Config, q *sm.QPConfig) { q.MaxSendWR = 3 }},
		{"MaxRecvWR", func(_ *sm.Config, q *sm.QPConfig) { q.MaxSendWR = -1 }},
	}
	badAttrs = []badAttr{{sm.StateRTS, "TIMEOUT", sm.ErrInvalidAttr, func(a *sm.Attr, _ *sm.AttrMask) { a.Timeout = 3 }}}
	c := rejectConfigs(t)[0]
	if f := c.checkValidation(0); len(f) != 3 {
		t.Errorf("want 3 failures, got %q", f)
	}
}

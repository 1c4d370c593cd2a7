package active

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// TestSilentIUTNoPanic: against an IUT none of whose frames arrive (the
// simulated fabric drops them all), no case panics; each ends with a
// verdict that says what was missing (issue 14: reqStaleNACK indexed the
// data it never got). IPv6, so that every case applies.
func TestSilentIUTNoPanic(t *testing.T) {
	tgt, err := NewInproc(InprocConfig{Seed: 1, Loss: 100, IPv6: true})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing arrives, so every wait runs to its end: poll the IUT's
	// completions less often than the synthetic profile does, to keep the
	// test short (what is checked is that no case panics).
	tim := SyntheticTiming()
	tim.Poll = 20 * tim.Poll
	rep, err := Run(context.Background(), tgt, Options{Seed: 1, Today: today, Timing: &tim})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if strings.Contains(r.Reason, "panic") {
			t.Errorf("%s: %s: %.300s", r.Case.ID, r.Verdict, r.Reason)
		}
	}
}

// floodLink is a link on which the IUT never stops sending.
type floodLink struct {
	now   Time
	frame []byte
}

func (l *floodLink) Planes() int            { return 1 }
func (l *floodLink) Now() Time              { return l.now }
func (l *floodLink) Send(int, []byte) error { return nil }
func (l *floodLink) SetTap(func(Frame))     {}
func (l *floodLink) Close() error           { return nil }
func (l *floodLink) Recv(Time) (Frame, bool, error) {
	l.now += statemachine.Microsecond
	return Frame{At: l.now, Data: l.frame}, true, nil
}
func (l *floodLink) Control() *control.Client { return nil }
func (l *floodLink) RealTime() bool           { return false }
func (l *floodLink) Name() string             { return "flood" }
func (l *floodLink) Local() Addrs             { return Addrs{IP: inprocTesterIP} }

// TestCaseFloodBounded (issue 14): an IUT that never stops sending ends
// the case in ERROR once it has sent MaxCaseBytes, naming why, instead of
// growing the tester without bound.
func TestCaseFloodBounded(t *testing.T) {
	link := &floodLink{frame: make([]byte, 9000)}
	s := &session{ctx: context.Background(), tgt: link, codec: wire.Default, tester: link.Local(), tim: SyntheticTiming()}
	c := &Case{Run: func(t *T) {
		for {
			if _, ok := t.Recv(t.Now() + statemachine.Second); !ok {
				return
			}
		}
	}}
	c.ID = "MRC-TEST-FLOOD-1"
	res, _ := s.runCase(context.Background(), c)
	if res.Verdict != conformance.Error || !strings.Contains(res.Reason, "MaxCaseBytes") {
		t.Errorf("%s: %s", res.Verdict, res.Reason)
	}
	if got := s.caseBytes; got > MaxCaseBytes+len(link.frame) {
		t.Errorf("took %d bytes, the limit is %d", got, MaxCaseBytes)
	}
}

// TestCaptureBounded: a run's capture keeps at most captureLimit bytes of
// frames and says in its notes how many it left out.
func TestCaptureBounded(t *testing.T) {
	defer func(l int) { captureLimit = l }(captureLimit)
	captureLimit = 4096
	tgt, err := NewInproc(InprocConfig{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var capture bytes.Buffer
	rep, err := Run(context.Background(), tgt, Options{Seed: 1, Today: today, Cases: "MRC-RSP-RCV-101", Capture: &capture, CaptureName: "c.pcapng"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Capture.Notes) != 1 || !strings.Contains(rep.Capture.Notes[0], "later frames are not in it") {
		t.Errorf("notes %q", rep.Capture.Notes)
	}
	if n := capture.Len(); n > 4096+4096 { // the frames plus pcapng blocks
		t.Errorf("a %d-byte capture under a 4096-byte limit", n)
	}
}

package active

import (
	"sync"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/wire"
)

// timelineMax bounds the events kept for one case's timeline: the most
// recent ones, as the judge keeps the events around a failure.
const timelineMax = 1200

// timeline records, from the link's tap, the frames of the running case
// in both directions as timeline events (conformance.TimelineEventOf,
// the judge's drawing rules), for the per-EV timeline of a case that
// fails. Taps may run on the link's reader goroutines.
type timeline struct {
	mu     sync.Mutex
	codec  *wire.Codec
	mode   wire.EVMode
	pkt    wire.Packet
	events []conformance.TimelineEvent
}

func (tl *timeline) tap(f Frame) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.codec.Decode(f.Data, &tl.pkt) != nil {
		return
	}
	te, ok := conformance.TimelineEventOf(&tl.pkt, tl.pkt.EV(tl.mode))
	if !ok {
		return
	}
	te.Frame, te.TimeNs, te.Plane = f.Seq, int64(f.At), f.Plane
	if len(tl.events) >= 2*timelineMax {
		tl.events = append(tl.events[:0], tl.events[len(tl.events)-timelineMax:]...)
	}
	tl.events = append(tl.events, te)
}

// take returns the events recorded since the last take (at most
// timelineMax, the latest) and starts afresh.
func (tl *timeline) take() []conformance.TimelineEvent {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	evs := tl.events[max(0, len(tl.events)-timelineMax):]
	out := make([]conformance.TimelineEvent, len(evs))
	copy(out, evs)
	tl.events = tl.events[:0]
	return out
}

// caseTimeline is the timeline of a case that ended with FAIL or
// NON-STRICT findings, with the findings' frames marked; ok is false for
// a case without one.
func caseTimeline(res *conformance.Result, evs []conformance.TimelineEvent) (conformance.Timeline, bool) {
	marks := map[int]bool{}
	for _, f := range res.Findings {
		if (f.Verdict == conformance.Fail || f.Verdict == conformance.NonStrict) && f.Frame > 0 {
			marks[f.Frame] = true
		}
	}
	if len(marks) == 0 || len(evs) == 0 {
		return conformance.Timeline{}, false
	}
	for i := range evs {
		evs[i].Mark = marks[evs[i].Frame]
	}
	return conformance.Timeline{Connection: "tester and IUT, " + res.Case.ID, Case: res.Case.ID, Events: evs}, true
}

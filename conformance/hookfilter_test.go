package conformance

import (
	"bytes"
	"testing"
)

// unfilterHooks makes the engine judging capture under pics call every
// sent hook for every write, every arrived hook for every arrival and
// every answer hook for every answer, as
// if no hook declared the kinds it acts on, and count each frame's
// passing observations in its row at once rather than in a row slot
// (passList), until the returned function restores both.
func unfilterHooks(t *testing.T, capture, pics string) (restore func()) {
	t.Helper()
	p := goldenPICSOf(t, capture, pics)
	if p == nil {
		p = DefaultPICS()
	}
	h := hookSetFor(p.live())
	saved, arrived, answers, limit := h.sentBy, h.arrivedBy, h.answerBy, passListLimit
	for k := range h.sentBy {
		h.sentBy[k] = h.sentAll[0]
		if writeKind(k)&wResend != 0 {
			h.sentBy[k] = h.sentAll[1]
		}
	}
	for k := range h.arrivedBy {
		h.arrivedBy[k] = h.arrived
	}
	for k := range h.answerBy {
		h.answerBy[k] = h.answer
	}
	passListLimit = 0
	return func() { h.sentBy, h.arrivedBy, h.answerBy, passListLimit = saved, arrived, answers, limit }
}

// TestFilteredHooksIdentical: the hooks the engine skips for a frame, by
// the kinds each declares it acts on (check.sentOn, resentOn, arrivedOn,
// answerOn), are hooks
// that would have done nothing, and the passing observations counted in
// row slots (rowSlot.passes) are those counted frame by frame: every
// golden capture under every PICS gives byte-identical text and JSON
// reports (observation counts included) both ways.
func TestFilteredHooksIdentical(t *testing.T) {
	report := func(c, pics string) [][]byte {
		rep, err := judgeGolden(t, c, pics)
		if err != nil {
			return nil
		}
		var out [][]byte
		for _, f := range []Format{FormatText, FormatJSON} {
			var b bytes.Buffer
			if err := rep.Write(&b, f); err != nil {
				t.Fatal(err)
			}
			out = append(out, b.Bytes())
		}
		return out
	}
	n := 0
	for _, c := range goldenCaptures(t) {
		for _, pics := range picsFor(c) {
			filtered := report(c, pics)
			restore := unfilterHooks(t, c, pics)
			all := report(c, pics)
			restore()
			if len(filtered) != len(all) {
				t.Errorf("%s under the %s PICS: judged with filtered hooks and not with all, or the reverse", c, pics)
				continue
			}
			for i := range filtered {
				if !bytes.Equal(filtered[i], all[i]) {
					t.Errorf("%s under the %s PICS: the report with filtered hooks differs from the one with every hook called:\n%s", c, pics, firstDiff(all[i], filtered[i]))
					break
				}
			}
			n++
		}
	}
	if n < 40 {
		t.Errorf("only %d capture and PICS pairs judged", n)
	}
}

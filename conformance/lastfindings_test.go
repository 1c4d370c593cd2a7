package conformance

import (
	"slices"
	"testing"
)

// lastFindingsCapture is a repository capture where one case fails more
// often than Result.Findings holds, with more than LastFindings to spare
// (MRC-RSP-SACK-002: 109 findings).
const lastFindingsCapture = "../pcap/testdata/scenarios/reorder.pcapng"

// TestLastFindingsKept: a case that fails more often than Findings holds
// also keeps the last LastFindings of the others (issue 12: evidence is
// the first K and the last K, with counts), in frame order, after every
// finding listed in full, reduced to where and when they were judged.
func TestLastFindingsKept(t *testing.T) {
	rep, err := JudgeFile(lastFindingsCapture, Options{Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, res := range rep.Results {
		rest := res.FindingCount - len(res.Findings)
		if want := min(rest, LastFindings); len(res.LastFindings) != want {
			t.Errorf("%s: %d findings, %d listed, %d kept last; want %d", res.Case.ID, res.FindingCount, len(res.Findings), len(res.LastFindings), want)
		}
		if len(res.LastFindings) == 0 {
			continue
		}
		seen++
		if !slices.IsSortedFunc(res.LastFindings, func(a, b Finding) int { return a.Frame - b.Frame }) {
			t.Errorf("%s: last findings not in frame order", res.Case.ID)
		}
		first := 0
		for _, f := range res.Findings {
			first = max(first, f.Frame)
		}
		for _, f := range res.LastFindings {
			if f.Frame < first || f.Requirement == "" || f.Point == "" || f.Expected != "" || f.Observed != "" || f.Related != nil {
				t.Errorf("%s: last finding %+v: want a frame after the listed ones (%d), its requirement and point, no evidence", res.Case.ID, f, first)
			}
		}
	}
	if seen == 0 {
		t.Fatalf("%s: no case failed more than %d times: the test checks nothing", lastFindingsCapture, MaxFindings)
	}
}

// TestLastRingKeepsLatest: the ring keeps the latest LastFindings in
// judging order, and merging the rings of several engines (keepLast)
// keeps what one engine's ring would hold.
func TestLastRingKeepsLatest(t *testing.T) {
	mk := func(ord uint64) lastPlace {
		return placeOf(&Finding{Requirement: "WIRE-RETH-2", Frame: int(ord), ord: ord, at: findingPlace{frame: int(ord)}})
	}
	var one obsCount
	var shard [3]obsCount
	for ord := uint64(1); ord <= 40; ord++ {
		if one.last == nil {
			one.last = &lastRing{}
		}
		one.last.put(mk(ord))
		s := &shard[ord*7%3]
		if s.last == nil {
			s.last = &lastRing{}
		}
		s.last.put(mk(ord))
	}
	var merged obsCount
	for i := range shard {
		merged.keepLast(shard[i].last.all())
	}
	frames := func(fs []Finding) (n []int) {
		for _, f := range fs {
			n = append(n, f.Frame)
		}
		return n
	}
	want := []int{31, 32, 33, 34, 35, 36, 37, 38, 39, 40}
	if got := frames(one.last.all()); !slices.Equal(got, want) {
		t.Errorf("one ring holds frames %v, want %v", got, want)
	}
	if got := frames(merged.last.all()); !slices.Equal(got, want) {
		t.Errorf("merged rings hold frames %v, want %v", got, want)
	}
}

// TestPutLastOverwritesEveryField: putLast stores the fields of the ring's
// slot one by one, so a slot reused after the ring wraps must keep
// nothing of the place it held: it equals the place of the failure put.
func TestPutLastOverwritesEveryField(t *testing.T) {
	e := &engine{frameNo: 7, now: 99, idx: 3}
	pt := &point{name: "tx", curPlane: 2}
	o := &obsCount{last: &lastRing{}}
	for i := range o.last.f {
		o.last.f[i] = lastPlace{req: "OLD", node: "old", point: "old", ord: 1, verdict: Pass, how: onTiming | onAbsence,
			at: findingPlace{frame: 1, ns: 1, plane: 1, conn: "old"}}
	}
	for n := range LastFindings + 1 {
		e.putLast(o, Fail, "WIRE-RETH-2", onFrame, pt, "n1")
		want := lastPlace{req: "WIRE-RETH-2", node: "n1", point: "tx", ord: 3<<24 | uint64(n+1), verdict: Fail, how: onFrame,
			at: findingPlace{frame: 7, ns: 99, plane: 2}}
		if got := o.last.f[n%LastFindings]; got != want {
			t.Fatalf("put %d: slot holds %+v, want %+v", n+1, got, want)
		}
	}
}

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

// TestFailStreamPlacesAsPutLast: failWhy fills the latest ring itself once
// a key keeps no more findings and holds the first failure of the kind (a
// steady stream of failures); each place it keeps equals the one putLast
// keeps of the same failure, on a connection or on none, the first
// failure of another kind is still kept in full, and the counts take
// every failure.
func TestFailStreamPlacesAsPutLast(t *testing.T) {
	e := newEngine(DefaultPICS())
	pt := newPoint("tx")
	pt.curPlane = 2
	fl := newFlow(flowKey{req: "n0", rsp: "n1", qpn: 5}, 1)
	req, how := rCurrent_RSP_SACK_1, onTiming|onAbsence
	total := MaxFindings + 1 + 2*LastFindings
	for n := range total {
		e.frameNo, e.now = 10+n, int64(1000+n)
		pt.curFlow = nil
		if n%2 == 0 {
			pt.curFlow = fl
		}
		seq := e.seq
		e.failWhy(req, pt, "n1", how, nil)
		if n <= MaxFindings {
			continue // kept in full, then the first of its kind
		}
		o := &e.row(pt, "n1")[req.cs()]
		w := &engine{frameNo: e.frameNo, now: e.now, idx: e.idx, seq: seq}
		ref := &obsCount{last: &lastRing{}}
		w.putLast(ref, Fail, req.id(), how, pt, "n1")
		if got := o.last.f[(o.last.n-1)%LastFindings]; got != ref.last.f[0] {
			t.Fatalf("failure %d: the ring holds %+v, want %+v", n+1, got, ref.last.f[0])
		}
	}
	e.failWhy(req, pt, "n1", onFrame, nil) // a kind the stream has not failed: its first is kept in full
	total++
	o := &e.row(pt, "n1")[req.cs()]
	if !o.firsts.holds(onFrame) {
		t.Errorf("the first failure of another kind after the stream is not kept in full")
	}
	if o.bad != total || o.badTA != total-1 || o.total != total || len(o.findings) != MaxFindings || o.last.n != total-MaxFindings {
		t.Errorf("counts bad %d, badTA %d, total %d, findings %d, ring %d; want %d, %d, %d, %d, %d",
			o.bad, o.badTA, o.total, len(o.findings), o.last.n, total, total-1, total, MaxFindings, total-MaxFindings)
	}
}

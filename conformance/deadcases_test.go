package conformance

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// TestPresetCasesTakeNoEvidenceRoom: a case whose verdict the PICS gives
// (here MRC-REQ-HDR-001, NOT-APPLICABLE: scenePICS does not declare
// tseth, and no write carries a TSETH) is not judged, so its failures
// fill none of the bounds on evidence. 55 senders' MaxFindings writes
// each fail three observations the capture decides: 8,250 findings, all
// kept, under MaxKeptFindings, with no note that some were not.
func TestPresetCasesTakeNoEvidenceRoom(t *testing.T) {
	const senders = 55
	rep, e := judgeBoth(t, failingWrites(t, senders, MaxFindings))
	if e.kept != 3*senders*MaxFindings {
		t.Errorf("%d findings kept, want the three failing observations of every write (%d)", e.kept, 3*senders*MaxFindings)
	}
	if n := notesWith(rep, fmt.Sprintf("more than %d findings", MaxKeptFindings)); len(n) != 0 {
		t.Errorf("notes %q: the findings the report shows were all kept", n)
	}
	for np, row := range e.rows {
		if o := row[cTSETHAll]; o.used {
			t.Errorf("%v: %s, NOT-APPLICABLE under the PICS, judged (%d failures)", np, cTSETHAll, o.bad)
		}
	}
	for _, res := range rep.Results {
		if res.Case.ID == cTSETHAll.String() && (res.Verdict != NotApplicable || res.Checked != 0) {
			t.Errorf("%s: %v with %d checked, want NOT-APPLICABLE with none", res.Case.ID, res.Verdict, res.Checked)
		}
	}
}

// atTPICS: scenePICS's nodes, the capture point at T, the device under
// test, and no parameter.
const atTPICS = `{"pics_version": 1, "features": {"trim_nack": true}, "dut": ["T"],
	"nodes": {"T": ["fd00::1"], "D": ["fd00::2"]}, "parameters": {},
	"capture": {"points": {"D": "T"}, "reaction_time_ns": 1000}}`

// TestTimelineAroundLiveFailure: a connection's timeline is kept around
// the failures the report shows. 1,300 good writes without TSETH under a
// PICS without tseth (MRC-REQ-HDR-001 NOT-APPLICABLE), then one with
// DSCP 0: the timeline holds that write, marked, not only the first
// writes.
func TestTimelineAroundLiveFailure(t *testing.T) {
	s, w, buf := recordScene(t)
	const good = 1300
	write := func(psn uint32) *wire.Packet {
		p := limitWrite(psn, 0x100)
		p.BTH.AckReq = true // the last packet of its message
		return p
	}
	for k := range good {
		s.feed(limitFrame(t, 1, write(uint32(k))))
	}
	p := write(good)
	p.IP6.TrafficClass = 0
	s.feed(limitFrame(t, 1, p))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	pics, err := ParsePICS([]byte(atTPICS))
	if err != nil {
		t.Fatal(err)
	}
	r, err := pcap.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Judge(r, "timeline", Options{PICS: pics, Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	if v := rep.Verdict(cDSCP.String()); v != Fail {
		t.Fatalf("%s: %v, want FAIL", cDSCP, v)
	}
	bad := good + 1
	var shown []int
	for _, tl := range rep.Timelines {
		for _, ev := range tl.Events {
			if ev.Frame == bad {
				shown = append(shown, ev.Frame)
				if !ev.Mark {
					t.Errorf("%s: frame %d shown unmarked", tl.Connection, bad)
				}
			}
		}
	}
	if !slices.Contains(shown, bad) {
		t.Errorf("timelines %d, none showing frame %d, the DSCP failure", len(rep.Timelines), bad)
	}
}

package conformance

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/conformance/internal/capgen"
	"github.com/openmrc/mrc/wire"
)

// testDay is the date deviations expire against in the tests.
var testDay = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

func referencePICS(t testing.TB) *PICS {
	t.Helper()
	p, err := LoadPICS("testdata/reference.pics.json")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func judgeTestdata(t testing.TB, f capgen.Fault, opts Options) *Report {
	t.Helper()
	if opts.PICS == nil {
		opts.PICS = referencePICS(t)
	}
	if opts.Today.IsZero() {
		opts.Today = testDay
	}
	rep, err := JudgeFile("testdata/"+capgen.FileName(f), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// goodVerdicts is the verdict of every passive case on the correct
// exchange. Cases the exchange does not exercise are INCONCLUSIVE, cases
// whose feature the PICS does not declare NOT-APPLICABLE; nothing fails.
var goodVerdicts = map[string]Verdict{
	"MRC-LR-NACK-002":   Inconclusive, // no resource NACK
	"MRC-LR-NACK-003":   Inconclusive, // no fatal NACK
	"MRC-LR-TMR-001":    Inconclusive, // retries unlimited (exp_cnt 25)
	"MRC-RSP-NACK-002":  NotApplicable,
	"MRC-RSP-NACK-003":  Inconclusive, // no out-of-window PSN
	"MRC-WIMM-RSP-001":  Inconclusive, // limit never exceeded
	"MRC-WIRE-DSCP-003": NotApplicable,
	"MRC-WIRE-EV-003":   NotApplicable,
	"MRC-EP-PSU-001":    Inconclusive, // no port status update
}

// faultFails is, for each seeded fault, the cases that must FAIL and the
// requirement each failing finding names. No other case may FAIL.
var faultFails = map[capgen.Fault]map[string][]string{
	capgen.GoBackN:    {"MRC-LR-RTX-001": {"LR-RTX-1", "LR-SACK-2"}},      // LR-RTX-1: go-back-N resends acknowledged PSNs
	capgen.Unflagged:  {"MRC-LR-RTX-003": {"WIRE-BTH-5"}},                 // WIRE-BTH-5: retransmission without rtx
	capgen.NACKedEV:   {"MRC-LR-NACK-001": {"EV-ST-13"}},                  // EV-ST-13: retransmission on the NACKed EV
	capgen.BeyondMPR:  {"MRC-MPR-WIN-001": {"MPR-WIN-1"}},                 // MPR-WIN-1: PSN beyond una + 128 × MPR
	capgen.WIMMOrder:  {"MRC-WIMM-ORD-001": {"WIRE-METH-3"}},              // WIRE-METH-3, WIMM-RSP-2: WriteIMM order
	capgen.BadICRC:    {"MRC-WIRE-ICRC-001": {"WIRE-ICRC-1"}},             // WIRE-ICRC-1
	capgen.Reserved:   {"MRC-WIRE-GEN-001": {"WIRE-BTH-7"}},               // WIRE-GEN-2, WIRE-BTH-7
	capgen.SACKUnseen: {"MRC-RSP-SACK-001": {"WIRE-SETH-6", "RSP-RCV-4"}}, // WIRE-SETH-6: SACK claims an unseen PSN
	capgen.Premature:  {"MRC-LR-RTX-002": {"LR-RTX-1"}},                   // LR-RTX-1: retransmission without loss signal
	capgen.NoAnswer:   {"MRC-RSP-PRB-001": {"RSP-PRB-1"}},                 // RSP-PRB-1: a probe never answered, at B's own tap
}

// TestGoodCapturePasses judges the correct exchange: every applicable case
// PASSes except those it does not exercise, and the run exits 0.
func TestGoodCapturePasses(t *testing.T) {
	rep := judgeTestdata(t, capgen.Good, Options{})
	for _, res := range rep.Results {
		want, ok := goodVerdicts[res.Case.ID]
		if !ok {
			want = Pass
		}
		if res.Verdict != want {
			t.Errorf("%s: %s (%s), want %s", res.Case.ID, res.Verdict, res.Reason, want)
			for _, f := range res.Findings {
				t.Logf("  frame %d %s %s: expected %s; observed %s", f.Frame, f.Verdict, f.Requirement, f.Expected, f.Observed)
			}
		}
	}
	if rep.ExitCode() != 0 || rep.Summary.Result != "PASS" {
		t.Errorf("exit code %d, result %s", rep.ExitCode(), rep.Summary.Result)
	}
	if len(rep.Capture.Notes) != 0 {
		t.Errorf("notes on the good capture: %q", rep.Capture.Notes)
	}
}

// TestSeededFaults is the evidence that the judge catches broken
// implementations: each seeded fault FAILs exactly the expected cases,
// with findings naming the expected requirements, and nothing else fails.
func TestSeededFaults(t *testing.T) {
	for _, f := range capgen.Faults {
		if f == capgen.Good {
			continue
		}
		t.Run(string(f), func(t *testing.T) {
			want, ok := faultFails[f]
			if !ok {
				t.Fatalf("no expectation for fault %s", f)
			}
			rep := judgeTestdata(t, f, Options{})
			var got []string
			for _, res := range rep.Results {
				if res.Verdict == Error {
					t.Errorf("%s: ERROR %s", res.Case.ID, res.Reason)
				}
				if res.Verdict != Fail {
					continue
				}
				got = append(got, res.Case.ID)
				reqs, expected := want[res.Case.ID]
				if !expected {
					t.Errorf("%s FAILs unexpectedly: %s", res.Case.ID, res.Reason)
				}
				for _, fd := range res.Findings {
					if fd.Verdict == Fail && !slices.Contains(reqs, string(fd.Requirement)) {
						t.Errorf("%s: finding on %s names %s, want one of %v", res.Case.ID, fd.Requirement, fd.Requirement, reqs)
					}
					if fd.Frame == 0 {
						t.Errorf("%s: finding without a frame", res.Case.ID)
					}
				}
			}
			for id := range want {
				if !slices.Contains(got, id) {
					t.Errorf("%s does not FAIL (%s)", id, rep.Verdict(id))
				}
			}
			if rep.ExitCode() != 1 {
				t.Errorf("exit code %d, want 1", rep.ExitCode())
			}
		})
	}
}

// TestCatalogValid checks every case against the registry (Case.Validate)
// and that the judge has a checker for every passive case and no checker
// without a case.
func TestCatalogValid(t *testing.T) {
	if err := CatalogErr(); err != nil {
		t.Fatal(err)
	}
	var passive []string
	for _, c := range Catalog() {
		if err := c.Validate(); err != nil {
			t.Error(err)
		}
		if c.Mode == Passive {
			passive = append(passive, c.ID)
		}
	}
	have := slices.Clone(caseNames[:numCases])
	slices.Sort(have)
	if !slices.Equal(have, passive) {
		t.Errorf("caseNames %v\ncases    %v", have, passive)
	}
	// A caseID naming no case, or a case no caseID names, is a catalog
	// error at start-up.
	bad := slices.Clone(passiveCases)
	bad[0].ID = "MRC-WIRE-XXX-999"
	if err := checkCaseNames(bad); err == nil {
		t.Error("checkCaseNames accepted a catalog without a case the judge records")
	}
}

// TestWireRequirementsMapped: every requirement the codec can report
// (each wire.ReqID) maps to the case whose check judges it, which lists
// it, and is cited as itself; an error that names none (wire.NoReq) and a
// value that is no ReqID are cited as WIRE-BTH-1 under MRC-WIRE-BTH-001.
func TestWireRequirementsMapped(t *testing.T) {
	for r := wire.NoReq + 1; r < wire.NumReqs; r++ {
		q := codecReq(r)
		cs, req := q.cs(), q.id()
		if !hooks.codecJudged[r] || req != RequirementID(r.String()) {
			t.Errorf("%s maps to %s as %s (judged %v)", r, cs, req, hooks.codecJudged[r])
			continue
		}
		c, _ := LookupCase(cs.String())
		if !slices.Contains(c.Requirements, req) {
			t.Errorf("%s maps to %s, which does not list it", r, cs)
		}
	}
	for _, r := range []wire.ReqID{wire.NoReq, wire.NumReqs, 255} {
		if q := codecReq(r); q.cs() != cWireBTH1 || q.id() != "WIRE-BTH-1" {
			t.Errorf("codecReq(%d) = %s, %s", r, q.cs(), q)
		}
	}
}

// TestDeterministic judges the same capture twice and compares every
// report format byte for byte.
func TestDeterministic(t *testing.T) {
	var outs [2][]string
	for i := range outs {
		rep := judgeTestdata(t, capgen.GoBackN, Options{})
		for _, f := range Formats {
			var b bytes.Buffer
			if err := rep.Write(&b, f); err != nil {
				t.Fatal(err)
			}
			// JUnit carries the time of the run.
			outs[i] = append(outs[i], string(junitTime.ReplaceAll(b.Bytes(), nil)))
		}
	}
	for i, f := range Formats {
		if outs[0][i] != outs[1][i] {
			a, b := strings.Split(outs[0][i], "\n"), strings.Split(outs[1][i], "\n")
			for k := 0; k < len(a) && k < len(b); k++ {
				if a[k] != b[k] {
					t.Errorf("%s output differs between runs, line %d:\n%s\n%s", f, k+1, a[k], b[k])
					break
				}
			}
		}
	}
}

// TestAbsenceNeedsTapAtDUT: a finding whose evidence is a packet not seen
// (here: RSP-PRB-1, a probe the responder never answered) is a FAIL when
// the capture point is at the judged node's own interface, and
// INCONCLUSIVE, with the reason, when it is not, since the packet may
// have been lost between the point and the node. Evidence of presence (a
// go-back-N retransmission, LR-RTX-1) FAILs wherever the point is.
func TestAbsenceNeedsTapAtDUT(t *testing.T) {
	const cs = "MRC-RSP-PRB-001"
	undeclared := picsWith(t, func(m map[string]any) { delete(m["capture"].(map[string]any), "points") })
	atDUT := picsWith(t, func(m map[string]any) {
		c := m["capture"].(map[string]any)
		delete(c, "points")
		c["location"] = "dut"
	})
	for _, c := range []struct {
		name string
		opts Options
		want Verdict
	}{
		{"tap declared at B", Options{}, Fail},
		{"location remote (option)", Options{CaptureLocation: LocationRemote}, Inconclusive},
		{"points not declared", Options{PICS: undeclared}, Inconclusive},
		{"location dut (PICS)", Options{PICS: atDUT}, Fail},
		{"location dut (option)", Options{PICS: undeclared, CaptureLocation: LocationDUT}, Fail},
	} {
		rep := judgeTestdata(t, capgen.NoAnswer, c.opts)
		res, _ := rep.Result(cs)
		if res.Verdict != c.want {
			t.Errorf("%s: %s %s (%s), want %s", c.name, cs, res.Verdict, res.Reason, c.want)
			continue
		}
		if len(res.Findings) == 0 || res.Findings[0].Requirement != "RSP-PRB-1" || res.Findings[0].Verdict != c.want {
			t.Errorf("%s: findings %+v", c.name, res.Findings)
			continue
		}
		if c.want == Inconclusive {
			if !strings.Contains(res.Reason, "is not at B's own interface") || !strings.Contains(res.Findings[0].Observed, "lost between") {
				t.Errorf("%s: reason %q, observed %q", c.name, res.Reason, res.Findings[0].Observed)
			}
			if rep.ExitCode() != 0 {
				t.Errorf("%s: exit code %d", c.name, rep.ExitCode())
			}
		}
		for _, pn := range rep.Capture.PointNodes {
			if pn.Node == "B" && pn.AtNode != (c.want == Fail) {
				t.Errorf("%s: point %s at_node %v", c.name, pn.Point, pn.AtNode)
			}
		}
	}
	rep := judgeTestdata(t, capgen.GoBackN, Options{CaptureLocation: LocationRemote})
	if v := rep.Verdict("MRC-LR-RTX-001"); v != Fail {
		t.Errorf("go-back-N at a remote tap: %s, want FAIL (resending acknowledged PSNs is seen, not inferred)", v)
	}
	var oe *OptionsError
	if _, err := JudgeFile("testdata/good.pcapng", Options{CaptureLocation: "nearby"}); !errors.As(err, &oe) {
		t.Errorf("bad capture location: %v, want an *OptionsError", err)
	}
}

// TestNACKedEVAfterBaseTimeout: a retransmission on the EV its NACK
// reflected FAILs EV-ST-13 when it comes sooner than the base timeout
// after the NACK, and is INCONCLUSIVE when it comes later, because then
// the stall timer of LR-SM-3 may have let the PSN go back on that EV, no
// other being usable (AMB-44). The seeded capture resends about 6 µs
// after the NACK: a FAIL with timeout 8 (T ≈ 262 µs), INCONCLUSIVE with
// timeout 0 (T = 1.024 µs).
func TestNACKedEVAfterBaseTimeout(t *testing.T) {
	const cs = "MRC-LR-NACK-001"
	for _, c := range []struct {
		timeout int
		want    Verdict
	}{{8, Fail}, {0, Inconclusive}} {
		p := picsWith(t, func(m map[string]any) { m["parameters"].(map[string]any)["timeout"] = c.timeout })
		rep := judgeTestdata(t, capgen.NACKedEV, Options{PICS: p})
		res, _ := rep.Result(cs)
		if res.Verdict != c.want {
			t.Errorf("timeout %d: %s %s (%s), want %s", c.timeout, cs, res.Verdict, res.Reason, c.want)
			continue
		}
		if c.want == Inconclusive && !strings.Contains(res.Reason, "AMB-44") {
			t.Errorf("timeout %d: reason %q does not name AMB-44", c.timeout, res.Reason)
		}
	}
}

// TestFrameSummaryAsFields: frameSummary agrees with joining
// strings.Fields from the fourth field on (or every field, for three or
// fewer), on Unicode white space, arrows, tabs, invalid UTF-8 and short
// lines.
func TestFrameSummaryAsFields(t *testing.T) {
	for _, s := range []string{
		"", " ", "1", "1 2 3", " 1\t2  3 \n", "1 2 3 4", "   12  0.000001  tx  10.0.0.1 → 10.0.0.2  128  EV 0x12\n",
		"1 2 3 a\u00a0b\u2003c\u3000 d", "1 2 3 \xff\xfe x \xc3", "a\u0085b\u2028c d e", "1 2 3 4 5 6 7 8 9 10\r\n",
	} {
		f := strings.Fields(s)
		if len(f) > 3 {
			f = f[3:]
		}
		if got, want := frameSummary([]byte(s)), strings.Join(f, " "); got != want {
			t.Errorf("frameSummary(%q) = %q, want %q", s, got, want)
		}
	}
}

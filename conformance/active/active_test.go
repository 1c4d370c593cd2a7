package active

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/peer"
	"github.com/openmrc/mrc/spec"
)

var today = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// runInproc runs cases (a pattern list; "" for all) against the
// in-process reference with faults seeded, over IPv4.
func runInproc(t testing.TB, faults peer.FaultSet, cases string, opts Options) *conformance.Report {
	return runInprocOn(t, false, faults, cases, opts)
}

// runInprocOn is runInproc over IPv6 when ipv6.
func runInprocOn(t testing.TB, ipv6 bool, faults peer.FaultSet, cases string, opts Options) *conformance.Report {
	t.Helper()
	tgt, err := NewInproc(InprocConfig{Faults: faults, Seed: 1, IPv6: ipv6})
	if err != nil {
		t.Fatal(err)
	}
	opts.Cases, opts.Today = cases, today
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	rep, err := Run(context.Background(), tgt, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestRegistration(t *testing.T) {
	if err := RegistrationErr(); err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`^MRC-[A-Z]+-[A-Z0-9]+-1[0-9]{2}$`)
	cs := Cases()
	if len(cs) < 30 {
		t.Fatalf("%d active cases", len(cs))
	}
	for _, c := range cs {
		if !id.MatchString(c.ID) {
			t.Errorf("%s: active case IDs are numbered from 101", c.ID)
		}
		if c.Run == nil || c.Role == "" {
			t.Errorf("%s: no procedure or role", c.ID)
		}
		got, ok := conformance.LookupCase(c.ID)
		if !ok || got.Mode != conformance.Active {
			t.Errorf("%s: not in the conformance catalog as an active case", c.ID)
		}
	}
}

// TestReferencePassesEveryCase: the reference implementation, in
// process, passes every active case, over IPv4 and over IPv6; a suite
// that failed it would be wrong (issue #7 item 6, the "PASS with no
// faults" half). Over IPv4 the cases that need IPv6 (SRv6) do not apply.
func TestReferencePassesEveryCase(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		rep := runInprocOn(t, v6, peer.FaultSet{}, "", Options{})
		if len(rep.Results) != len(Cases()) {
			t.Fatalf("%d results for %d cases", len(rep.Results), len(Cases()))
		}
		for _, r := range rep.Results {
			c, _ := lookupActive(r.Case.ID)
			want := referenceVerdict(c, v6)
			if r.Verdict != want {
				t.Errorf("IPv6 %v: %s: %s (want %s): %s", v6, r.Case.ID, r.Verdict, want, r.Reason)
				for _, f := range r.Findings {
					t.Logf("    %s %s: expected %s; observed %s", f.Verdict, f.Requirement, f.Expected, f.Observed)
				}
			}
		}
		if rep.ExitCode() != 0 || ExitCode(rep) != 0 {
			t.Errorf("IPv6 %v: exit code %d", v6, ExitCode(rep))
		}
	}
}

func lookupActive(id string) (Case, bool) {
	for _, c := range Cases() {
		if c.ID == id {
			return c, true
		}
	}
	return Case{}, false
}

// TestRunIsDeterministic: the in-process transport runs on synthetic time
// and seeded randomness, so two runs give the same report and capture.
func TestRunIsDeterministic(t *testing.T) {
	run := func() ([]byte, []byte) {
		var capture bytes.Buffer
		rep := runInproc(t, peer.FaultSet{}, "MRC-LR-RTX-103,MRC-RSP-RCV-104,MRC-EV-BAD-101", Options{Seed: 3, Capture: &capture, CaptureName: "x.pcapng"})
		j, err := rep.JSON()
		if err != nil {
			t.Fatal(err)
		}
		return j, capture.Bytes()
	}
	j1, c1 := run()
	j2, c2 := run()
	if !bytes.Equal(j1, j2) {
		t.Error("two runs with the same seed gave different reports")
	}
	if !bytes.Equal(c1, c2) || len(c1) == 0 {
		t.Error("two runs with the same seed gave different captures")
	}
}

func TestSelect(t *testing.T) {
	cs, err := Select("MRC-LR-NACK-*, MRC-EV-BAD-101")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	if got := strings.Join(ids, ","); got != "MRC-EV-BAD-101,MRC-LR-NACK-101,MRC-LR-NACK-102,MRC-LR-NACK-103,MRC-LR-NACK-104,MRC-LR-NACK-105" {
		t.Errorf("selected %s", got)
	}
	for _, bad := range []string{"MRC-NOPE-*", "[", "MRC-LR-*,MRC-NOPE-1"} {
		var ue *UsageError
		if _, err := Select(bad); err == nil || !asUsage(err, &ue) {
			t.Errorf("Select(%q): %v, want a *UsageError", bad, err)
		}
	}
}

func asUsage(err error, ue **UsageError) bool {
	e, ok := err.(*UsageError)
	*ue = e
	return ok
}

// TestExitCodes: 127 when the IUT supports none of the selected cases (the
// QUIC interop runner's convention), NOT-APPLICABLE for a missing
// feature.
func TestExitCodes(t *testing.T) {
	p, err := conformance.ParsePICS([]byte(`{"pics_version": 1, "features": {"ipv4": true},
		"unsupported_cases": ["MRC-LR-NACK-101", "MRC-LR-NACK-102"]}`))
	if err != nil {
		t.Fatal(err)
	}
	rep := runInproc(t, peer.FaultSet{}, "MRC-LR-NACK-101,MRC-LR-NACK-102", Options{PICS: p})
	if ExitCode(rep) != 127 {
		t.Errorf("every case NOT-SUPPORTED: exit code %d, want 127", ExitCode(rep))
	}
	rep = runInproc(t, peer.FaultSet{}, "MRC-RSP-NACK-101,MRC-LR-NACK-103", Options{PICS: p})
	if v := rep.Verdict("MRC-RSP-NACK-101"); v != conformance.NotApplicable {
		t.Errorf("MRC-RSP-NACK-101 without trim_nack: %s, want NOT-APPLICABLE", v)
	}
	if ExitCode(rep) != 0 {
		t.Errorf("exit code %d, want 0", ExitCode(rep))
	}
	fs, _ := peer.ParseFaults("go-back-n")
	if rep := runInproc(t, fs, "MRC-LR-RTX-101", Options{}); ExitCode(rep) != 1 {
		t.Errorf("go-back-n: exit code %d, want 1", ExitCode(rep))
	}
}

// TestInprocCaptureAgreesWithJudge: the capture of a lossless in-process
// run, judged passively with the IUT as the only DUT, has no FAIL either.
// The fabric loses nothing, so the tester's tap sees what the IUT's own
// interface would (capture.location dut): findings that rest on a packet
// not seen count too.
func TestInprocCaptureAgreesWithJudge(t *testing.T) {
	var capture bytes.Buffer
	rep := runInproc(t, peer.FaultSet{}, "", Options{Capture: &capture, CaptureName: "inproc.pcapng"})
	if rep.Summary.Result != "PASS" {
		t.Fatalf("active run: %s", rep.Summary.Result)
	}
	name := t.TempDir() + "/inproc.pcapng"
	if err := writeFile(name, capture.Bytes()); err != nil {
		t.Fatal(err)
	}
	picsJSON := `{"pics_version": 1,
		"features": {"trim_nack": true, "endpoint_ops": true, "ipv4": true},
		"dut": ["iut"], "nodes": {"iut": ["10.0.0.2"], "tester": ["10.0.0.1"]},
		"parameters": {"mpr": 1, "mpr_dest": 1},
		"capture": {"points": {"tester": "tester"}, "location": "dut", "reaction_time_ns": 5000, "timer_tolerance_ns": 5000}}`
	keepCapture(t, "inproc", 1, capture.Bytes(), picsJSON)
	pics, err := conformance.ParsePICS([]byte(picsJSON))
	if err != nil {
		t.Fatal(err)
	}
	judged, err := conformance.JudgeFile(name, conformance.Options{PICS: pics, Today: today})
	if err != nil {
		t.Fatal(err)
	}
	if judged.Summary.Result != conformance.ResultPass || judged.Summary.MustPassed < 30 {
		t.Errorf("judged %s with %d MUST cases passed (%s): the judge checked too little", judged.Summary.Result, judged.Summary.MustPassed, judged.Summary.Why)
	}
	if judged.Capture.Frames != rep.Capture.Frames {
		t.Errorf("the judge read %d frames, the tester wrote %d", judged.Capture.Frames, rep.Capture.Frames)
	}
	for _, r := range judged.Results {
		for _, f := range r.Findings {
			if f.Verdict == conformance.Fail {
				t.Errorf("passive %s: %s frame %d: expected %s; observed %s", r.Case.ID, f.Requirement, f.Frame, f.Expected, f.Observed)
			}
		}
	}
	// Every active finding's frame number is a frame of the capture.
	fs, _ := peer.ParseFaults("go-back-n")
	capture.Reset()
	rep = runInproc(t, fs, "MRC-LR-RTX-101", Options{Capture: &capture})
	res := rep.Results[0]
	if res.Verdict != conformance.Fail || len(res.Findings) == 0 {
		t.Fatalf("go-back-n: %s", res.Verdict)
	}
	for _, f := range res.Findings {
		if f.Frame < 1 || f.Frame > rep.Capture.Frames {
			t.Errorf("finding at frame %d of %d", f.Frame, rep.Capture.Frames)
		}
	}
}

// TestEveryMUSTHasACase: every MUST and MUST NOT of spec/ that can be
// judged from packets (conformance.Coverage's rule: a case covers it, a
// WIRE-* requirement not listed in WireUnobservable, or a behaviour listed
// in BehaviourObservable) has at least one conformance case, passive or
// active; every other MUST says why packets cannot show it. A new
// wire-observable MUST without a case fails this test.
func TestEveryMUSTHasACase(t *testing.T) {
	all, sum := conformance.Coverage(nil)
	if len(sum.Missing) > 0 {
		t.Errorf("wire-observable MUST requirements without a conformance case: %v", sum.Missing)
	}
	if sum.ObservableMust == 0 || sum.ObservableMustCase != sum.ObservableMust || sum.Percent != 100 {
		t.Errorf("%d of %d wire-observable MUSTs have a case (%.1f %%)", sum.ObservableMustCase, sum.ObservableMust, sum.Percent)
	}
	for _, rc := range all {
		must := rc.Level == spec.Must || rc.Level == spec.MustNot
		switch {
		case must && rc.Observable && len(rc.Cases) == 0:
			t.Errorf("%s: wire-observable (%s) and no case", rc.ID, rc.Why)
		case must && !rc.Observable && rc.Why == "":
			t.Errorf("%s: neither covered nor said why packets cannot show it", rc.ID)
		}
	}
	// The requirements of issue #7's coverage gap, now covered.
	for _, id := range []string{"WIRE-GEN-1", "WIRE-ENC-3", "WIRE-UDP-2", "EV-SET-5", "EV-ST-2", "EV-ST-3", "EV-ST-6", "EV-ST-8", "EV-REP-1"} {
		if len(conformance.CasesCovering(id)) == 0 {
			t.Errorf("%s has no case", id)
		}
	}
}

package active

import (
	"bytes"
	"testing"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/peer"
)

// TestPassiveUnexpOnSACKedPSN: an UNEXP_EVENT NACK naming a PSN the
// requester holds as selectively acknowledged still fails the QP (LR-NACK-4,
// LR-NACK-6, AMB-100), so the passive judge must hold the requester to
// silence after it (QP-ST-11, case MRC-LR-NACK-003). The capture is the
// in-process run of MRC-LR-NACK-105 against a reference that ignores such
// a NACK (seeded fault ignore-sacked-unexp) and keeps sending.
func TestPassiveUnexpOnSACKedPSN(t *testing.T) {
	fs, err := peer.ParseFaults("ignore-sacked-unexp")
	if err != nil {
		t.Fatal(err)
	}
	var capture bytes.Buffer
	rep := runInproc(t, fs, "MRC-LR-NACK-105", Options{Capture: &capture, CaptureName: "unexp.pcapng"})
	if len(rep.Results) != 1 || rep.Results[0].Verdict != conformance.Fail {
		t.Fatalf("active MRC-LR-NACK-105 against ignore-sacked-unexp: %+v, want FAIL", rep.Results)
	}
	name := t.TempDir() + "/unexp.pcapng"
	if err := writeFile(name, capture.Bytes()); err != nil {
		t.Fatal(err)
	}
	pics, err := conformance.ParsePICS([]byte(`{"pics_version": 1,
		"features": {"trim_nack": true, "endpoint_ops": true, "ipv4": true},
		"dut": ["iut"], "nodes": {"iut": ["10.0.0.2"], "tester": ["10.0.0.1"]},
		"parameters": {"mpr": 1, "mpr_dest": 1},
		"capture": {"points": {"tester": "tester"}, "location": "dut", "reaction_time_ns": 5000, "timer_tolerance_ns": 5000}}`))
	if err != nil {
		t.Fatal(err)
	}
	judged, err := conformance.JudgeFile(name, conformance.Options{PICS: pics, Today: today})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range judged.Results {
		if r.Case.ID == "MRC-LR-NACK-003" {
			if r.Verdict != conformance.Fail {
				t.Errorf("passive MRC-LR-NACK-003: %s, want FAIL (the IUT kept sending after an UNEXP_EVENT naming a SACKed PSN)", r.Verdict)
			}
			return
		}
	}
	t.Error("passive MRC-LR-NACK-003 not in the report")
}

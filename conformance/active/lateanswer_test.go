package active

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// TestJudgeLateAnswerToFirstCopy replays, in synthetic time, what made
// TestE2EAFPacket fail now and then on a loaded machine: the IUT's SACK
// for the first copy of a PSN reaches the tester's tap after the tester
// has resent the PSN, CE-marked and on another EV. Here a one-way delay
// of 1.5 ms (longer than half the tester's retransmission timeout) makes
// every late answer so. The reference peer answers each copy as
// RSP-SACK-3 says (the SACK reflects the EV, WIRE-EV-5, and m the ECN of
// the copy it answers), so the passive judge must find no FAIL under
// MRC-RSP-SACK-004; before the judge matched a SACK with the copy whose
// EV, timestamp and mark it reflects, it matched the latest copy and
// failed these runs (35 of 40 seeds and delays from 200 µs to 1.5 ms).
func TestJudgeLateAnswerToFirstCopy(t *testing.T) {
	picsJSON := `{"pics_version": 1,
		"features": {"trim_nack": true, "endpoint_ops": true, "ipv4": true},
		"dut": ["iut"], "nodes": {"iut": ["10.0.0.2"], "tester": ["10.0.0.1"]},
		"parameters": {"mpr": 1, "mpr_dest": 1},
		"capture": {"points": {"tester": "tester"}, "location": "remote", "reaction_time_ns": 5000000, "timer_tolerance_ns": 5000000}}`
	pics, err := conformance.ParsePICS([]byte(picsJSON))
	if err != nil {
		t.Fatal(err)
	}
	late := 0
	for seed := uint64(1); seed <= 4; seed++ {
		tgt, err := NewInproc(InprocConfig{Seed: seed, Delay: 1500 * statemachine.Microsecond, Loss: 10})
		if err != nil {
			t.Fatal(err)
		}
		var capture bytes.Buffer
		if _, err := Run(context.Background(), tgt, Options{Seed: seed, Cases: "MRC-RSP-RCV-104", Today: today,
			Capture: &capture, CaptureName: "late.pcapng"}); err != nil {
			t.Fatal(err)
		}
		keepOnFailure(t, "late-answer", seed, capture.Bytes(), picsJSON)
		late += lateAnswers(t, capture.Bytes())
		name := filepath.Join(t.TempDir(), "late.pcapng")
		if err := writeFile(name, capture.Bytes()); err != nil {
			t.Fatal(err)
		}
		rep, err := conformance.JudgeFile(name, conformance.Options{PICS: pics, Today: today})
		if err != nil {
			t.Fatal(err)
		}
		r, _ := rep.Result("MRC-RSP-SACK-004")
		for _, f := range r.Findings {
			if f.Verdict == conformance.Fail {
				t.Errorf("seed %d: MRC-RSP-SACK-004 %s frame %d (trigger frames %v): expected %s; observed %s",
					seed, f.Requirement, f.Frame, f.Related, f.Expected, f.Observed)
			}
		}
	}
	// The runs must hold the situation, or the test tests nothing.
	if late == 0 {
		t.Fatal("no SACK answered a first copy after a differently marked copy of its PSN on another EV")
	}
	t.Logf("%d SACKs answered an earlier copy after a later, differently marked copy of their PSN", late)
}

// lateAnswers counts the IUT's SACKs that reflect the EV and ECN of an
// earlier copy of their trigger PSN when a later copy, on another EV and
// marked otherwise, came before them in the capture.
func lateAnswers(t *testing.T, capture []byte) int {
	rd, err := pcap.NewReader(bytes.NewReader(capture))
	if err != nil {
		t.Fatal(err)
	}
	type cp struct {
		ev uint32
		ce bool
	}
	copies := map[uint32][]cp{}
	n := 0
	var f pcap.Frame
	for rd.Next(&f) == nil {
		var p wire.Packet
		if wire.Default.Decode(f.Data, &p) != nil {
			continue
		}
		switch {
		case p.BTH.Opcode.IsWrite():
			copies[p.BTH.PSN] = append(copies[p.BTH.PSN], cp{p.EV(wire.EVModeSTEV), p.ECN() == 3})
		case p.BTH.Opcode == wire.OpSACK && !p.SETH.PR:
			c := copies[p.SETH.AckPSN()]
			if len(c) < 2 {
				continue
			}
			last := c[len(c)-1]
			for _, e := range c[:len(c)-1] {
				if e.ev == p.SETH.Entropy && e.ev != last.ev && e.ce != last.ce {
					n++
					break
				}
			}
		}
	}
	return n
}

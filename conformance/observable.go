package conformance

import (
	"slices"
	"strings"

	"github.com/openmrc/mrc/spec"
)

// Which requirements are wire-observable, i.e. could be judged from the
// packets an implementation sends and receives (passively from a capture,
// or actively with crafted packets)? The rule, applied in order:
//
//  1. A requirement some catalog case covers is observable: the case is
//     the proof.
//  2. A WIRE-* requirement is observable unless WireUnobservable lists it
//     with the reason.
//  3. Another requirement is observable when BehaviourObservable lists it
//     with the packets that show it.
//  4. Nothing else is: internal state, API calls, completions, controller
//     operations and the reference state machine's own decisions (*-SM-n,
//     which bind only this project's implementation).
//
// Coverage reports, for the observable MUST and MUST NOT requirements, the
// share covered by at least one case.

// WireUnobservable lists the WIRE-* requirements that are not judged from
// end-point packets, with the reason.
var WireUnobservable = map[string]string{
	"WIRE-EV-4":  "uSID shifting is switch behaviour (uN), not end-point behaviour",
	"WIRE-EV-10": "how a NIC derives SRv6 paths needs its node configuration; the path itself is on the wire but not its derivation",
	"WIRE-EV-11": "EV expansion needs the EV profile's field masks, which no capture or PICS field carries",
	"WIRE-EV-12": "the wire formats cannot carry an EV wider than the format; the limit is an API rule",
}

// BehaviourObservable lists the non-WIRE requirements whose effect shows in
// packets, with what shows it.
var BehaviourObservable = map[string]string{
	"REQ-OP-3":   "PSN order of messages (MSN order)",
	"REQ-SEG-1":  "packet count and sizes of each message",
	"REQ-SEG-2":  "opcode sequence of each message",
	"REQ-SEG-3":  "RETH and ImmDt in each packet",
	"REQ-PSN-1":  "consecutive PSNs of first transmissions",
	"REQ-PSN-2":  "content of retransmissions",
	"REQ-PSN-3":  "MSN/RQMSN of a QP's first message",
	"REQ-PSN-4":  "distance between una and the PSNs sent",
	"REQ-HDR-1":  "TSETH presence",
	"REQ-HDR-3":  "ack_req flags",
	"REQ-TX-1":   "PSNs sent against the windows seen in SACKs",
	"REQ-TX-2":   "retransmissions sent before new PSNs",
	"EV-SET-4":   "EVs carrying data after feedback",
	"EV-SET-5":   "number of EVs per plane in use",
	"EV-ST-1":    "EVs carrying data",
	"EV-ST-2":    "EV use after SKIP_ONCE",
	"EV-ST-3":    "EV use after TRIMMED NACKs",
	"EV-ST-4":    "EV use after ALWAYS_SKIP",
	"EV-ST-5":    "EV use after a timeout retransmission",
	"EV-ST-6":    "EV use across rotations",
	"EV-ST-7":    "EV use after probe answers",
	"EV-ST-8":    "EV use after a SKIP_ONCE probe answer",
	"EV-ST-10":   "EV use after further feedback",
	"EV-ST-13":   "EV of the retransmission after a NACK",
	"EV-REP-1":   "planes of the EVs in use after retirements",
	"EV-PRB-1":   "probes on retired EVs",
	"EV-PRB-2":   "probe intervals",
	"EV-PRB-3":   "probe PSNs",
	"EV-PRB-4":   "probe answers",
	"EV-PORT-2":  "traffic per plane after a port status update",
	"EV-PORT-3":  "traffic per plane after a port-up update",
	"EV-REV-1":   "planes of the control packets",
	"EV-REV-4":   "plane of each SACK and NACK against its trigger's",
	"LR-SACK-1":  "retransmissions against the cumulative point",
	"LR-SACK-2":  "retransmissions against the SACK bitmaps",
	"LR-SACK-3":  "EV reaction to the m verdict",
	"LR-SACK-5":  "timeouts of selectively acknowledged packets",
	"LR-NACK-1":  "retransmission after TRIMMED NACKs",
	"LR-NACK-2":  "retransmission delay after resource NACKs",
	"LR-NACK-3":  "retransmission after PSN_OOR_WINDOW",
	"LR-NACK-4":  "silence after UNEXP_EVENT",
	"LR-NACK-6":  "no reaction to NACKs for non-outstanding PSNs",
	"LR-RTX-1":   "retransmitted PSNs against acknowledgements and loss signals",
	"LR-RTX-2":   "order of retransmissions",
	"LR-RTX-3":   "flags, EV and class of retransmissions",
	"LR-TMR-1":   "timeout retransmission delays",
	"LR-TMR-4":   "timeout retransmission delays",
	"LR-TMR-5":   "timeout retransmissions",
	"LR-TMR-6":   "retry count",
	"LR-TMR-7":   "silence after the retry limit",
	"MPR-WIN-1":  "PSN distance from una",
	"MPR-WIN-4":  "PSN_OOR_WINDOW NACKs",
	"MPR-DYN-2":  "SETH mpr",
	"MPR-DYN-3":  "PSNs against the advertised window",
	"MPR-DYN-4":  "PSNs against the advertised window",
	"RSP-RCV-1":  "no answer to discarded packets",
	"RSP-RCV-4":  "SACK cack and bitmaps",
	"RSP-RCV-5":  "SACKs across the PSN wrap",
	"RSP-RCV-6":  "answers to duplicates and out-of-window PSNs",
	"RSP-DUP-1":  "rcvd_bytes after duplicates",
	"RSP-DUP-2":  "SACKs answering duplicates",
	"RSP-DUP-3":  "answers to duplicates flagged or not",
	"RSP-SACK-1": "SACK fields",
	"RSP-SACK-2": "SACK bitmap base",
	"RSP-SACK-3": "SACK m against ECN",
	"RSP-SACK-5": "SACKs per packet",
	"RSP-SACK-6": "SACK DSCP and plane",
	"RSP-SACK-7": "CC_STATE fields",
	"RSP-ACK-1":  "ACKNOWLEDGE packets",
	"RSP-ACK-2":  "retransmissions after ACKs",
	"RSP-ACK-3":  "NAK packets and silence after them",
	"RSP-NACK-1": "NACKs answering trims",
	"RSP-NACK-2": "silence after trims",
	"RSP-NACK-3": "resource NACKs",
	"RSP-NACK-4": "PSN_OOR_WINDOW NACKs",
	"RSP-NACK-5": "UNEXP_EVENT NACKs",
	"RSP-NACK-6": "NACK DSCP, plane and timestamp",
	"RSP-PRB-1":  "probe answers",
	"RSP-PRB-2":  "probe answers' m",
	"WIMM-RSP-2": "RQMSN order of WriteIMMs",
	"WIMM-RSP-4": "refusal of WriteIMMs over the limit",
	"WIMM-REQ-1": "WriteIMMs in flight",
	"WIMM-REQ-3": "PSN order of messages behind a held WriteIMM",
	"QP-ST-11":   "silence of a QP in ERROR",
	"EP-GEN-1":   "endpoint requests",
	"EP-GEN-4":   "endpoint DSCPs",
	"EP-GEN-5":   "endpoint responses",
	"EP-GEN-6":   "plane of endpoint responses",
	"EP-PSU-1":   "port status updates after a port change",
	"EP-PSU-2":   "port status masks",
	"EP-PSU-3":   "traffic per plane after an update",
	"EP-PSU-4":   "update repetition",
}

// RequirementCoverage is one requirement's coverage.
type RequirementCoverage struct {
	ID         string          `json:"id"`
	Level      spec.Level      `json:"level"`
	Section    string          `json:"section"`
	Observable bool            `json:"observable"`
	Why        string          `json:"why"` // why it is (or is not) observable
	Cases      []string        `json:"cases"`
	Citations  []spec.Citation `json:"citations"` // test files citing it
	Tests      int             `json:"tests"`     // number of citations in _test.go files
	Confidence spec.Confidence `json:"confidence"`
	Text       string          `json:"text"`
}

// CoverageSummary summarises the wire-observable MUST coverage.
type CoverageSummary struct {
	Requirements       int      `json:"requirements"`
	Observable         int      `json:"observable"`
	ObservableMust     int      `json:"observable_must"`
	ObservableMustCase int      `json:"observable_must_with_case"`
	Percent            float64  `json:"percent"`
	Missing            []string `json:"missing"` // observable MUSTs without a case
	Cases              int      `json:"cases"`
	PassiveCases       int      `json:"passive_cases"`
	ActiveCases        int      `json:"active_cases"`
}

// Coverage computes every requirement's coverage by the catalog and, when
// citations is not nil, by the tests that cite it (spec.ScanCitations).
func Coverage(citations map[string][]spec.Citation) ([]RequirementCoverage, CoverageSummary) {
	byReq := map[string][]string{}
	cat := Catalog()
	var sum CoverageSummary
	for _, c := range cat {
		for _, id := range c.Requirements {
			byReq[string(id)] = append(byReq[string(id)], c.ID)
		}
		if c.Mode == Passive {
			sum.PassiveCases++
		} else {
			sum.ActiveCases++
		}
	}
	sum.Cases = len(cat)
	var out []RequirementCoverage
	for _, q := range spec.Requirements() {
		rc := RequirementCoverage{ID: q.ID, Level: q.Level, Section: q.Section, Confidence: q.Confidence, Text: q.Text,
			Cases: slices.Clone(byReq[q.ID]), Citations: []spec.Citation{}}
		if rc.Cases == nil {
			rc.Cases = []string{}
		}
		slices.Sort(rc.Cases)
		rc.Cases = slices.Compact(rc.Cases)
		switch {
		case len(rc.Cases) > 0:
			rc.Observable, rc.Why = true, "covered by a case"
		case strings.HasPrefix(q.ID, "WIRE-"):
			if why, ok := WireUnobservable[q.ID]; ok {
				rc.Why = why
			} else {
				rc.Observable, rc.Why = true, "wire format"
			}
		case strings.Contains(q.ID, "-SM-"):
			rc.Why = "a decision of the reference state machine, binding only this implementation"
		default:
			if why, ok := BehaviourObservable[q.ID]; ok {
				rc.Observable, rc.Why = true, "visible in "+why
			} else {
				rc.Why = "internal state, API or completions: not in packets"
			}
		}
		for _, c := range citations[q.ID] {
			if c.Test {
				rc.Citations = append(rc.Citations, c)
				rc.Tests++
			}
		}
		sum.Requirements++
		if rc.Observable {
			sum.Observable++
			if normLevel(q.Level) == spec.Must {
				sum.ObservableMust++
				if len(rc.Cases) > 0 {
					sum.ObservableMustCase++
				} else {
					sum.Missing = append(sum.Missing, q.ID)
				}
			}
		}
		out = append(out, rc)
	}
	if sum.ObservableMust > 0 {
		sum.Percent = float64(int(1000*float64(sum.ObservableMustCase)/float64(sum.ObservableMust)+0.5)) / 10
	}
	if sum.Missing == nil {
		sum.Missing = []string{}
	}
	return out, sum
}

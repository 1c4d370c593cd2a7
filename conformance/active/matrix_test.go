package active

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/peer"
)

var update = flag.Bool("update", false, "rewrite the generated sections of README.md")

// wantDetected maps every seeded fault of the reference peer to the
// requirements whose cases must FAIL when it is seeded (issue #7 item 6):
// the suite demonstrably catches each known bug.
var wantDetected = map[string][]string{
	"go-back-n":           {"LR-RTX-1"},
	"ignore-trim":         {"LR-NACK-1"},
	"reuse-nacked-ev":     {"EV-ST-13"},
	"early-wimm":          {"WIMM-RSP-1"},
	"place-duplicates":    {"RSP-DUP-1"},
	"beyond-mpr":          {"MPR-WIN-1"},
	"no-restore":          {"EV-ST-7"},
	"no-hold-off":         {"LR-NACK-2"},
	"no-rtx-flag":         {"WIRE-BTH-5"},
	"bad-icrc":            {"WIRE-ICRC-1"},
	"ignore-ecn":          {"RSP-SACK-3", "RSP-PRB-2"},
	"no-probe-answer":     {"RSP-PRB-1"},
	"ignore-m-verdict":    {"EV-ST-4"},
	"ignore-port-status":  {"EV-PORT-2"},
	"no-ep-response":      {"EP-GEN-5"},
	"accept-bad-icrc":     {"RSP-RCV-1", "WIRE-ICRC-5"},
	"no-oor-nack":         {"RSP-NACK-4"},
	"imm-byte-swap":       {"WIRE-GEN-1"},
	"fixed-udp-sport":     {"WIRE-UDP-2"},
	"no-srv6-decap":       {"WIRE-ENC-3"},
	"ignore-skip-once":    {"EV-ST-2"},
	"skip-once-retires":   {"EV-ST-6"},
	"ignore-trim-ev":      {"EV-ST-3"},
	"ignore-probe-skip":   {"EV-ST-8"},
	"no-replacement":      {"EV-REP-1", "EV-SET-5"},
	"replace-ev-noop":     {"CTL-OP-3"},
	"gen-ev-unexpanded":   {"CTL-GEN-3"},
	"ignore-port-admin":   {"CTL-PORT-2"},
	"no-solicited-flag":   {"CTL-CQ-2"},
	"notify-any":          {"CTL-CQ-1"},
	"no-port-async-event": {"CTL-AEV-2"},
	"batch-sorted":        {"CTL-BAT-3"},
	"version-swapped":     {"CTL-VER-1"},
	"vendor-cfg-dropped":  {"CTL-QPH-3"},
	"adj-svc-time-set":    {"CTL-SVC-1"},
	"no-srv6-encap":       {"CTL-EVX-6"},
	"no-comm-est":         {"CTL-AEV-4"},
	"no-qp-fatal":         {"CTL-AEV-5"},
	"context-any-version": {"CTL-VER-2"},
	"channel-unwired":     {"CTL-CQ-5"},
	"no-sq-drained":       {"CTL-AEV-6"},
	"ev-range-unchecked":  {"CTL-OP-6"},
	"ignore-sacked-unexp": {"LR-NACK-4"},
}

type detection struct {
	fault string
	cases []string // failing cases
	reqs  []string // requirements of their FAIL findings
}

func detect(t *testing.T, fault string) detection {
	fs, err := peer.ParseFaults(fault)
	if err != nil {
		t.Fatal(err)
	}
	rep := runInprocOn(t, true, fs, "", Options{})
	d := detection{fault: fault}
	for _, r := range rep.Results {
		if r.Verdict != conformance.Fail {
			continue
		}
		d.cases = append(d.cases, r.Case.ID)
		for _, f := range r.Findings {
			if f.Verdict == conformance.Fail && !slices.Contains(d.reqs, string(f.Requirement)) {
				d.reqs = append(d.reqs, string(f.Requirement))
			}
		}
	}
	slices.Sort(d.reqs)
	return d
}

// TestDetectionMatrix runs the whole suite (in process, over IPv6, so
// that the SRv6 case applies) against the reference with each seeded
// fault and checks that the expected requirements FAIL; README.md's
// matrix is generated from the result (go test -run TestDetectionMatrix
// -update) and must be current.
func TestDetectionMatrix(t *testing.T) {
	for _, f := range peer.Faults {
		if _, ok := wantDetected[f.Name()]; !ok {
			t.Errorf("fault %s has no expected detection", f.Name())
		}
	}
	var mu sync.Mutex
	rows := map[string]detection{}
	t.Run("faults", func(t *testing.T) {
		for _, f := range peer.Faults {
			t.Run(f.Name(), func(t *testing.T) {
				t.Parallel()
				d := detect(t, f.Name())
				for _, req := range wantDetected[f.Name()] {
					if !slices.Contains(d.reqs, req) {
						t.Errorf("fault %s: %s did not FAIL (failing: %v in %v)", f.Name(), req, d.reqs, d.cases)
					}
				}
				mu.Lock()
				rows[f.Name()] = d
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		return
	}
	var b strings.Builder
	b.WriteString("| Fault (`mrc-peer --fault`) | What it breaks | Failing cases | Failing requirements |\n|---|---|---|---|\n")
	for _, f := range peer.Faults {
		d := rows[f.Name()]
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Name(), f.Doc(), strings.Join(d.cases, ", "), strings.Join(d.reqs, ", "))
	}
	b.WriteString("| (none) | the reference implementation | — | — |\n")
	checkSection(t, "DETECTION MATRIX", b.String())
}

// TestCaseTable keeps README.md's list of cases current.
func TestCaseTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("| Case | IUT role | Level | Requirements | Title |\n|---|---|---|---|---|\n")
	for _, c := range Cases() {
		feat := ""
		if len(c.Features) > 0 {
			feat = " (PICS: " + strings.Join(c.Features, ", ") + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s%s |\n", c.ID, c.Role, c.Level, conformance.JoinRequirements(c.Requirements, ", "), c.Title, feat)
	}
	checkSection(t, "CASES", b.String())
}

// checkSection compares (or with -update rewrites) the README.md text
// between <!-- BEGIN name --> and <!-- END name -->.
func checkSection(t *testing.T, name, body string) {
	t.Helper()
	const file = "README.md"
	old, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := []byte("<!-- BEGIN "+name+" -->\n"), []byte("<!-- END "+name+" -->")
	i, j := bytes.Index(old, begin), bytes.Index(old, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q section", file, name)
	}
	updated := slices.Concat(old[:i+len(begin)], []byte(body), old[j:])
	if bytes.Equal(old, updated) {
		return
	}
	if *update {
		if err := os.WriteFile(file, updated, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's %s section is stale: run go test ./conformance/active -run '%s' -update", file, name, t.Name())
}

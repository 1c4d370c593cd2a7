package conformance_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/openmrc/mrc/conformance"
)

// Judge a capture of a requester that resends PSNs a SACK had already
// acknowledged (go-back-N), and print the failing case and its evidence.
func ExampleJudgeFile() {
	pics, err := conformance.LoadPICS("testdata/reference.pics.json")
	if err != nil {
		panic(err)
	}
	rep, err := conformance.JudgeFile("testdata/fault-gobackn.pcapng", conformance.Options{PICS: pics, Today: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Summary.Result, rep.ExitCode(), rep.Summary.FailedCases)
	res, _ := rep.Result("MRC-LR-RTX-001")
	f := res.Findings[0]
	fmt.Printf("frame %d %s: expected %s\n", f.Frame, f.Requirement, f.Expected)
	// Output:
	// FAIL 1 [MRC-LR-RTX-001]
	// frame 36 LR-SACK-2: expected no resend: selectively acknowledged in the SACK bitmap of frame 17
}

// A case of the catalog, with the requirements it checks.
func ExampleLookupCase() {
	c, _ := conformance.LookupCase("MRC-LR-NACK-001")
	fmt.Println(c.Title)
	fmt.Println(c.Level, c.Requirements, c.View)
	// Output:
	// The NACKed EV is not reused for the retransmission
	// MUST NOT [EV-ST-13 LR-NACK-1] requester
}

// Deviations are one per line: name, cases, expiry date, reason.
func ExampleParseDeviations() {
	d, err := conformance.ParseDeviations([]byte("fw12 MRC-LR-RTX-003 2026-12-31 firmware 1.2 omits rtx\n"))
	if err != nil {
		panic(err)
	}
	active, expired := d.Resolve(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(d.List[0].Name, d.List[0].Cases, d.List[0].Reason, len(active), len(expired))
	// Output:
	// fw12 [MRC-LR-RTX-003] firmware 1.2 omits rtx 0 1
}

// The terminal summary of a judgement, here its last line.
func ExampleReport_WriteText() {
	pics, _ := conformance.LoadPICS("testdata/reference.pics.json")
	rep, err := conformance.JudgeFile("testdata/good.pcapng", conformance.Options{PICS: pics, Today: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		panic(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	fmt.Fprintln(os.Stdout, lines[len(lines)-1])
	// Output:
	// RESULT PASS (exit status 0)
}

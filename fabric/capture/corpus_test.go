package capture_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openmrc/mrc/fabric/capture"
)

// scenarioDir holds the capture scenarios' pcapng files, beside the rest
// of the decoder's corpus.
const scenarioDir = "../../pcap/testdata/scenarios"

// TestScenarioCorpus checks the simulator's impairment captures in
// pcap/testdata/scenarios: there is exactly one per capture scenario
// (regenerate them with `go run ./cmd/mrc-sim capture -dir
// pcap/testdata/scenarios`), each decodes without a malformed frame or a
// strict-check violation, and each shows its impairment on the wire
// (trims, CE marks, losses, retransmissions, probes, ...).
func TestScenarioCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	var have, want []string // sorted
	for _, f := range files {
		have = append(have, strings.TrimSuffix(filepath.Base(f), ".pcapng"))
	}
	for _, c := range capture.Scenarios() {
		want = append(want, c.Name)
	}
	slices.Sort(have)
	slices.Sort(want)
	if !slices.Equal(have, want) {
		t.Fatalf("%s holds %v, the capture scenarios are %v", scenarioDir, have, want)
	}
	for _, name := range have {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(scenarioDir, name+".pcapng"))
			if err != nil {
				t.Fatal(err)
			}
			c, _ := capture.Lookup(name)
			e, err := c.Check(data)
			if err != nil {
				t.Fatalf("%v\nevidence: %+v", err, e)
			}
			if e.Frames < 100 {
				t.Errorf("only %d frames", e.Frames)
			}
		})
	}
}

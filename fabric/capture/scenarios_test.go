package capture

import (
	"bytes"
	"testing"
)

// TestScenarios runs every capture scenario, checks that its
// capture is well formed and shows the impairment on the wire, and that
// the same seed writes the same bytes (every capture is replayable).
func TestScenarios(t *testing.T) {
	const seed = 1
	for _, c := range Scenarios() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			var a, b bytes.Buffer
			if err := c.Write(seed, &a); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			e, err := c.Check(a.Bytes())
			if err != nil {
				t.Fatalf("seed %d: %v\nevidence: %+v", seed, err, e)
			}
			t.Logf("%s: %d frames, %d bytes: %+v", c.Name, e.Frames, a.Len(), *e)
			if err := c.Write(seed, &b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("seed %d: two runs wrote different captures", seed)
			}
		})
	}
}

// TestCaptureEvidenceCanFail shows that the evidence checks reject a
// capture without the impairment: the loss scenario's check on the
// duplicate scenario's capture (no retransmissions there) must fail, and
// so must every check on an empty capture.
func TestCaptureEvidenceCanFail(t *testing.T) {
	loss, _ := Lookup("loss")
	reverse, _ := Lookup("reverse-loss")
	var clean bytes.Buffer
	if err := reverse.Write(1, &clean); err != nil {
		t.Fatal(err)
	}
	if _, err := loss.Check(clean.Bytes()); err == nil {
		t.Error("the loss evidence accepted a capture with no data loss")
	}
	for _, c := range Scenarios() {
		if _, err := c.Check(nil); err == nil {
			t.Errorf("%s: accepted an empty capture", c.Name)
		}
	}
}

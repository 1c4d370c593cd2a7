package scripts

import (
	"os/exec"
	"testing"
)

// TestPGOScriptParses: pgo.sh, which regenerates mrc-conform's profile
// (cmd/mrc-conform's TestDefaultPGO checks the profile), is valid bash.
func TestPGOScriptParses(t *testing.T) {
	if out, err := exec.Command("bash", "-n", "pgo.sh").CombinedOutput(); err != nil {
		t.Fatalf("bash -n scripts/pgo.sh: %v\n%s", err, out)
	}
}

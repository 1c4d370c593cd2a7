package main

import (
	"strings"
	"testing"

	"github.com/openmrc/mrc/conformance"
)

// TestJudgeRefusesBrokenChecks: judge checks the case catalog and the
// check table when it starts (conformance.ChecksErr) and, when they are
// broken, judges nothing: exit status 2, the error naming the check's
// case on standard error. (The conformance package's
// TestJudgeRefusesBrokenChecks plants the broken tables.)
func TestJudgeRefusesBrokenChecks(t *testing.T) {
	if err := checksErr(); err != nil {
		t.Fatalf("the built-in table: %v", err)
	}
	saved := checksErr
	defer func() { checksErr = saved }()
	broken := &conformance.CatalogError{Case: "MRC-WIRE-MSG-001", Msg: "its check cites requirement WIRE-" + "RETH3, which is not in the registry"}
	checksErr = func() error { return broken }
	out, errOut, status := run(t, "judge", ctd+"good.pcapng", "--pics", "default")
	if status != 2 || out != "" || !strings.Contains(errOut, "mrc-conform judge: "+broken.Error()) {
		t.Errorf("judge with a broken check table: status %d, stdout %q, stderr %q", status, out, errOut)
	}
}

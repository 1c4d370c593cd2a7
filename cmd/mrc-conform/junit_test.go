package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openmrc/mrc/internal/testenv"
)

// TestJUnitValidatesStrictly: the JUnit that run and judge write
// validates with xmllint against the strict schema
// (conformance/testdata/junit-strict.xsd).
func TestJUnitValidatesStrictly(t *testing.T) {
	xmllint := testenv.LookPath(t, "xmllint")
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"run":   {"run", "--cases", "MRC-LR-RTX-*,MRC-WIRE-ENC-101", "--format", "junit"},
		"judge": {"judge", ctd + "fault-gobackn.pcapng", "--pics", ctd + "reference.pics.json", "--format", "junit"},
	} {
		file := filepath.Join(dir, name+".xml")
		out, errs, code := run(t, append(args, "-o", file)...)
		if code > 2 {
			t.Fatalf("%s: exit %d\n%s\n%s", name, code, out, errs)
		}
		b, err := exec.Command(xmllint, "--noout", "--schema", "../../conformance/testdata/junit-strict.xsd", file).CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", name, err, b)
		}
		doc, _ := os.ReadFile(file)
		if !strings.Contains(string(doc), `<property name="verdict:MRC-`) || !strings.Contains(string(doc), ` timestamp="`) {
			t.Errorf("%s: no verdict properties or timestamp:\n%.600s", name, doc)
		}
	}
}

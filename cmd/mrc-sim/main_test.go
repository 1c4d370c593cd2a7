package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openmrc/mrc/pcap"
)

func TestList(t *testing.T) {
	var b bytes.Buffer
	if err := run([]string{"list"}, &b); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"ev-loss", "t1-down", "plane-down", "incast", "loss"} {
		if !strings.Contains(b.String(), n) {
			t.Errorf("list lacks %s:\n%s", n, b.String())
		}
	}
}

// TestRunWritesTraceAndCapture: one scenario with its NDJSON trace and a
// pcapng that the pcap package reads back with an interface per plane.
func TestRunWritesTraceAndCapture(t *testing.T) {
	dir := t.TempDir()
	tr, cp := filepath.Join(dir, "t.ndjson"), filepath.Join(dir, "c.pcapng")
	var b bytes.Buffer
	if err := run([]string{"run", "-scenario", "plane-down", "-seed", "3", "-trace", tr, "-pcap", cp}, &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "MRC:") || !strings.Contains(b.String(), "mrc_post_ratio") {
		t.Errorf("output:\n%s", b.String())
	}
	data, err := os.ReadFile(tr)
	if err != nil || !bytes.HasPrefix(data, []byte(`{"t":`)) {
		t.Fatalf("trace: %v %.80q", err, data)
	}
	r, err := pcap.Open(cp)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var f pcap.Frame
	if err := r.Next(&f); err != nil {
		t.Fatal(err)
	}
	if n := r.Interface(f.Interface).Name; !strings.HasPrefix(n, "tx/plane") {
		t.Errorf("first frame on interface %q", n)
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"frobnicate"}, {"run", "-scenario", "nope"}} {
		if err := run(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestCaptureWritesEvidence: `capture` writes one pcapng per capture
// scenario that the pcap package reads back, and rejects a bad name.
func TestCaptureWritesEvidence(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	if err := run([]string{"capture", "-dir", dir, "-scenario", "trim"}, &b); err != nil {
		t.Fatal(err)
	}
	r, err := pcap.Open(filepath.Join(dir, "trim.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var f pcap.Frame
	n := 0
	for r.Next(&f) == nil {
		n++
	}
	if n < 100 || !strings.Contains(b.String(), "trim.pcapng") {
		t.Errorf("%d frames; output %q", n, b.String())
	}
	if err := run([]string{"capture", "-dir", dir, "-scenario", "nope"}, &b); err == nil {
		t.Error("unknown scenario accepted")
	}
	if err := run([]string{"capture"}, &b); err == nil {
		t.Error("missing -dir accepted")
	}
}

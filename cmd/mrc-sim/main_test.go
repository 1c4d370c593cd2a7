package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openmrc/mrc/pcap"
)

func TestList(t *testing.T) {
	var b bytes.Buffer
	if code := run([]string{"list"}, &b, os.Stderr); code != 0 {
		t.Fatalf("exit %d", code)
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
	if code := run([]string{"run", "-scenario", "plane-down", "-seed", "3", "-trace", tr, "-pcap", cp}, &b, os.Stderr); code != 0 {
		t.Fatalf("exit %d", code)
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

// TestUsage: usage errors exit 2 with one line and a hint on standard
// error; -h and --version exit 0 on standard output.
func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args      []string
		code      int
		firstLine string // of stderr, or of stdout when code is 0
	}{
		{nil, 2, "mrc-sim: no command given"},
		{[]string{"frobnicate"}, 2, `mrc-sim: unknown command "frobnicate"`},
		{[]string{"run", "-scenario", "nope"}, 2, `mrc-sim run: unknown scenario "nope" (mrc-sim list)`},
		{[]string{"run", "-bogus"}, 2, "mrc-sim run: flag provided but not defined: -bogus"},
		{[]string{"table", "extra"}, 2, `mrc-sim table: unexpected arguments ["extra"]`},
		{[]string{"capture"}, 2, "mrc-sim capture: -dir is required"},
		{[]string{"-h"}, 0, "usage: mrc-sim <command> [flags]"},
		{[]string{"--help"}, 0, "usage: mrc-sim <command> [flags]"},
		{[]string{"run", "-h"}, 0, "usage: mrc-sim run [flags]"},
		{[]string{"--version"}, 0, "mrc-sim "},
		{[]string{"version"}, 0, "mrc-sim "},
	} {
		var o, e bytes.Buffer
		code := run(c.args, &o, &e)
		out, other := e.String(), o.String()
		if c.code == 0 {
			out, other = other, out
		}
		if code != c.code || !strings.HasPrefix(out, c.firstLine) || other != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q first", c.args, code, o.String(), e.String(), c.code, c.firstLine)
		}
		hint := "see 'mrc-sim -h'"
		if name, _, _ := strings.Cut(c.firstLine, ":"); name != "mrc-sim" {
			hint = "see '" + name + " -h'"
		}
		if c.code == 2 && !strings.HasSuffix(e.String(), "\n"+hint+"\n") {
			t.Errorf("%q: stderr %q: want two lines, the error and the hint", c.args, e.String())
		}
	}
}

// TestCaptureWritesEvidence: `capture` writes one pcapng per capture
// scenario that the pcap package reads back, and rejects a bad name.
func TestCaptureWritesEvidence(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	if code := run([]string{"capture", "-dir", dir, "-scenario", "trim"}, &b, os.Stderr); code != 0 {
		t.Fatalf("exit %d", code)
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
	if code := run([]string{"capture", "-dir", dir, "-scenario", "nope"}, &b, io.Discard); code != 2 {
		t.Errorf("unknown scenario: exit %d, want 2", code)
	}
	if code := run([]string{"capture", "-dir", filepath.Join(dir, "missing")}, &b, io.Discard); code != 1 {
		t.Errorf("unwritable directory: exit %d, want 1", code)
	}
}

// TestCaptureAddressingFlags: -plane-addresses and -capture-host record a
// capture scenario with one address per node and plane, on node 1's ports
// named as given, out of time order; inconsistent flags are rejected.
func TestCaptureAddressingFlags(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	if code := run([]string{"capture", "-dir", dir, "-scenario", "loss", "-plane-addresses", "-capture-host", "1",
		"-capture-names", "ens1f0,ens1f1"}, &b, os.Stderr); code != 0 {
		t.Fatalf("exit status %d", code)
	}
	r, err := pcap.Open(filepath.Join(dir, "loss.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := &pcap.Decoder{}
	var prev int64
	back := 0
	err = d.Each(r, func(rec *pcap.Record) error {
		if want := []string{"ens1f0", "ens1f1"}[rec.Interface]; rec.Iface.Name != want {
			t.Errorf("frame %d on %s, want %s", rec.Number, rec.Iface.Name, want)
		}
		if src := rec.Packet.IP6.Src; !rec.Packet.IsIPv6 || src[0] != 0xfd || int(src[3]) != rec.Interface {
			t.Errorf("frame %d on plane %d from %x: not a plane address", rec.Number, rec.Interface, src)
		}
		if ts := rec.Timestamp.UnixNano(); ts < prev {
			back++
		}
		prev = rec.Timestamp.UnixNano()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if back == 0 {
		t.Error("frames in time order: want dumpcap's runs per interface")
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"capture", "-dir", dir, "-scenario", "loss", "-capture-names", "a,b"}, 2},
		{[]string{"capture", "-dir", dir, "-scenario", "loss", "-capture-host", "1", "-capture-names", "a"}, 1},
		{[]string{"capture", "-dir", dir, "-scenario", "loss", "-capture-host", "7"}, 1}, // no such node: empty capture
		{[]string{"run", "-scenario", "loss", "-capture-host", "1"}, 2},
	} {
		if code := run(c.args, &bytes.Buffer{}, io.Discard); code != c.code {
			t.Errorf("%v: exit status %d, want %d", c.args, code, c.code)
		}
	}
}

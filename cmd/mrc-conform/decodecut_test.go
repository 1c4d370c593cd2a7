package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openmrc/mrc/pcap"
)

// TestDecodeCutCapture: mrc-conform decode of a capture whose snap length
// (128) cut its writes shows each from its headers, marked cut, as tshark
// shows a frame its capture limited; before, every cut write was
// MALFORMED, breaking WIRE-LEN-1, which its sender did not.
func TestDecodeCutCapture(t *testing.T) {
	r, err := pcap.Open(testdata + "scenarios/loss.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b bytes.Buffer
	var w *pcap.Writer
	var f pcap.Frame
	for r.Next(&f) == nil {
		if w == nil {
			if w, err = pcap.NewWriter(&b, r.Interfaces()...); err != nil {
				t.Fatal(err)
			}
		}
		c := pcap.Frame{Timestamp: f.Timestamp, Interface: f.Interface, Length: len(f.Data), Data: f.Data[:min(len(f.Data), 128)]}
		if err := w.WriteFrame(&c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cut.pcapng")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, status := run(t, "decode", path)
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	if strings.Contains(out, "MALFORMED") || strings.Count(out, "[cut by the snap length: 128 of ") != 268 {
		t.Errorf("decode of the loss scenario cut to 128 bytes: %d lines marked cut, want its 268 writes; MALFORMED: %v", strings.Count(out, "[cut by the snap length"), strings.Contains(out, "MALFORMED"))
	}
}

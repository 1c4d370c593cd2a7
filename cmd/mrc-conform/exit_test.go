package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/pcap"
)

// TestExitTable runs every row of the README's table "Results and exit
// status" against the mrc-conform process: its exit status, the RESULT
// line (which must print that same status) and what stderr says.
func TestExitTable(t *testing.T) {
	dir := t.TempDir()
	noMRC := filepath.Join(dir, "arp.pcapng")
	writeNoMRCCapture(t, noMRC)
	cut := filepath.Join(dir, "cut.pcapng")
	if b, err := os.ReadFile("../../pcap/testdata/valid.pcapng"); err != nil || os.WriteFile(cut, b[:len(b)-20], 0o644) != nil {
		t.Fatal("writing a truncated capture", err)
	}
	allUnknown := startFakeIUT(t, func(n int, req control.Request) ([]byte, bool) {
		if req.Method == control.MethodHello {
			return helloReply(req), false
		}
		return reply(req.ID, nil, control.Errorf(control.CodeUnknownMethod, "%s", req.Method)), false
	})
	allInternal := startFakeIUT(t, func(n int, req control.Request) ([]byte, bool) {
		if req.Method == control.MethodHello {
			return helloReply(req), false
		}
		return reply(req.ID, nil, control.Errorf(control.CodeInternal, "the device is on fire")), false
	})
	pics := "--pics=" + ctd + "reference.pics.json"
	for _, row := range []struct {
		name   string
		args   []string
		code   int
		result string // the RESULT line's result; "" when no report is made
		stderr string // a phrase stderr must contain
		stdout string // a phrase stdout must contain
	}{
		// exit 2, no report: usage errors and unreadable input.
		{"usage/unknown flag", []string{"run", "--no-such-flag"}, 2, "", "no-such-flag", ""},
		{"usage/unknown command", []string{"nosuch"}, 2, "", "unknown command", ""},
		{"usage/judge without pics", []string{"judge", ctd + "good.pcapng"}, 2, "", "--pics", ""},
		{"unreadable/judge", []string{"judge", filepath.Join(dir, "missing.pcapng"), "--pics", "default"}, 2, "", "no such file", ""},
		{"unreadable/decode", []string{"decode", filepath.Join(dir, "missing.pcapng")}, 2, "", "no such file", ""},
		{"unreadable/decode directory", []string{"decode", dir}, 2, "", "is a directory", ""},
		{"unreachable IUT", []string{"run", "--transport", "udp", "--peer", deadPort(t), "--control", "unix:" + filepath.Join(dir, "nobody.sock")}, 2, "", "control channel", ""},
		// exit 2, RESULT ERROR: a case ended in ERROR.
		{"error/control answers internal", []string{"run", "--transport", "udp", "--peer", deadPort(t), "--control", allInternal.addr, "--cases", "MRC-LR-RTX-101"},
			2, "ERROR", "ERROR", "the device is on fire"},
		// exit 1, RESULT FAIL.
		{"fail/run", []string{"run", "--fault", "go-back-n", "--cases", "MRC-LR-RTX-101"}, 1, "FAIL", "", "MUST 0 passed, 1 failed (1 case): failed MRC-LR-RTX-101"},
		{"fail/judge", []string{"judge", ctd + "fault-gobackn.pcapng", pics}, 1, "FAIL", "", "failed"},
		{"fail/decode truncated", []string{"decode", cut}, 1, "", "unexpected EOF", "RDMA_WRITE"},
		// exit 0, RESULT PASS.
		{"pass/run", []string{"run", "--cases", "MRC-LR-RTX-101"}, 0, "PASS", "", "MUST 1 passed, 0 failed (1 case)"},
		{"pass/judge", []string{"judge", ctd + "good.pcapng", pics, "--today", "2026-06-01"}, 0, "PASS", "", "passed"},
		{"pass/judge under deviation", []string{"judge", ctd + "fault-unflagged-rtx.pcapng", pics, "--deviations", ctd + "example.deviations", "--today", "2026-06-01"},
			0, "PASS", "", "failed under a deviation"},
		{"pass/decode", []string{"decode", "../../pcap/testdata/malformed.pcapng"}, 0, "", "", ""},
		// exit 127, RESULT UNSUPPORTED: nothing checked, nothing supported.
		{"unsupported/not applicable", []string{"run", "--cases", "MRC-WIRE-ENC-101"}, 127, "UNSUPPORTED", "nothing was checked", "1 not applicable (1 case)"},
		{"unsupported/unknown_method", []string{"run", "--transport", "udp", "--peer", deadPort(t), "--control", allUnknown.addr},
			127, "UNSUPPORTED", "nothing was checked", "not supported"},
		// exit 2, RESULT INCONCLUSIVE: nothing checked for another reason.
		{"inconclusive/judge", []string{"judge", noMRC, "--pics", "default"}, 2, "INCONCLUSIVE", "", "nothing was checked"},
	} {
		t.Run(row.name, func(t *testing.T) {
			r := mrcConform(t, 60*time.Second, row.args...)
			if r.code != row.code {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, row.code, r.stdout, r.stderr)
			}
			if row.result != "" {
				checkResultLine(t, r, row.result)
			} else if strings.Contains(r.stdout, "RESULT ") {
				t.Errorf("a RESULT line where no report is made:\n%s", r.stdout)
			}
			if !strings.Contains(r.stderr, row.stderr) {
				t.Errorf("stderr lacks %q:\n%s", row.stderr, r.stderr)
			}
			if !strings.Contains(r.stdout, row.stdout) {
				t.Errorf("stdout lacks %q:\n%s", row.stdout, r.stdout)
			}
			if row.code == 2 && row.result == "" && r.stdout != "" {
				t.Errorf("an error printed to stdout:\n%s", r.stdout)
			}
		})
	}
}

// writeNoMRCCapture writes a pcapng with one ARP frame: nothing MRC to
// judge.
func writeNoMRCCapture(t *testing.T, name string) {
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pcap.NewWriter(f, pcap.Interface{Point: "tap", Plane: 0})
	if err != nil {
		t.Fatal(err)
	}
	arp := make([]byte, 42)
	copy(arp, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06})
	if err := w.WritePacket(time.Unix(1_767_225_600, 0), 0, arp); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

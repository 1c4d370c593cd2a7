package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/internal/emuclient"
	"github.com/openmrc/mrc/pcap"
)

// emuCaptureFile writes a capture of the MRC-Client emulator's frames.
func emuCaptureFile(t *testing.T) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "emu.pcapng")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pcap.NewWriter(f, pcap.Interface{Name: "plane0"})
	if err != nil {
		t.Fatal(err)
	}
	for i, fr := range emuclient.Session(emuclient.HostA, emuclient.HostB, 12) {
		if err := w.WritePacket(time.Unix(1, int64(i)*1000), 0, fr); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestProfilePresetEmu: --profile emu decodes and judges a capture of
// the MRC-Client emulator's frames with no finding but those the emulator
// really commits (P_Key 0, no ack_req, trimmable probes, ECN 00); under the
// default profile decode --stats and judge say the capture fits the emu
// preset better.
func TestProfilePresetEmu(t *testing.T) {
	name := emuCaptureFile(t)
	out, errOut, st := run(t, "decode", "--profile", "emu", name)
	if st != 0 || strings.Contains(out, "!") || strings.Count(out, "\n") != 29 {
		t.Errorf("decode --profile emu: status %d, %s\n%s", st, errOut, out)
	}
	if !strings.Contains(out, "ev=0x00010102 RDMA_WRITE_ONLY") || !strings.Contains(out, "op=EV_PROBE") {
		t.Errorf("decode --profile emu read other EVs or ops:\n%s", out)
	}
	out, _, _ = run(t, "decode", name)
	if strings.Count(out, "!WIRE-ICRC-1") != 29 {
		t.Errorf("decode under the default profile: want 29 ICRC findings:\n%s", out)
	}
	out, _, _ = run(t, "decode", "--stats", name)
	if !strings.Contains(out, "note: the capture fits the emu preset better (--profile emu): 29 frames carry ICRC errors that the emu preset accepts") ||
		!strings.Contains(out, "EV halves look swapped") {
		t.Errorf("decode --stats gives no advice:\n%s", out)
	}
	out, _, _ = run(t, "judge", "--pics", "default", name)
	if !strings.Contains(out, "note: the capture fits the emu preset better") {
		t.Errorf("judge gives no advice:\n%s", out)
	}
	// The advice, worked out while the judge runs, follows the report.
	if a, r := strings.Index(out, "note: the capture fits"), strings.Index(out, "RESULT "); r < 0 || a < r {
		t.Errorf("judge's advice is not after its RESULT line:\n%s", out)
	}
	out, _, st = run(t, "judge", "--pics", "default", "--profile", "emu", name)
	want := "failed MRC-WIRE-BTH-005, MRC-WIRE-BTH-006, MRC-WIRE-DSCP-001, MRC-WIRE-DSCP-002\n"
	if st != 1 || !strings.Contains(out, want) || strings.Contains(out, "note:") {
		t.Errorf("judge --profile emu: status %d, want only the emulator's own faults (%s):\n%s", st, want, out)
	}
	for _, f := range []string{"WIRE-BTH-14", "WIRE-BTH-12", "DSCP_NO_TRIM) on a probe", "ECN 00"} {
		if !strings.Contains(run1(t, "judge", "--pics", "default", "--profile", "emu", "-v", name), f) {
			t.Errorf("judge --profile emu does not report %q", f)
		}
	}
}

func run1(t *testing.T, args ...string) string {
	out, _, _ := run(t, args...)
	return out
}

// TestProfileFlag: a value naming a file is a JSON profile, any other a
// preset, and an unknown name is an error listing the presets, on decode,
// judge and run alike.
func TestProfileFlag(t *testing.T) {
	name := emuCaptureFile(t)
	p := filepath.Join(t.TempDir(), "emu.json")
	os.WriteFile(p, []byte(`{"name":"emu-file","udp_dst_port":4971,"bth_flag_order":1,"stev_halves":1,"icrc":1,"neth_cc_type":2}`), 0o644)
	if out, errOut, st := run(t, "decode", "--profile", p, name); st != 0 || strings.Contains(out, "!") {
		t.Errorf("decode --profile FILE: status %d %s\n%s", st, errOut, out)
	}
	for _, args := range [][]string{
		{"decode", "--profile", "nope", name},
		{"judge", "--pics", "default", "--profile", "nope", name},
		{"run", "--profile", "nope"},
	} {
		_, errOut, st := run(t, args...)
		if st != 2 || !strings.Contains(errOut, `unknown profile "nope" (presets: default, emu; or a JSON file)`) {
			t.Errorf("%v: status %d, %q", args, st, errOut)
		}
	}
}

// TestRunProfileEmu: run --profile emu against the in-process peer gives
// the peer the emu preset too, so the cases pass, the report names the
// profile, and the frames on the wire are the emulator's encoding: the
// default profile's decode says the capture fits emu better.
func TestRunProfileEmu(t *testing.T) {
	capFile := filepath.Join(t.TempDir(), "run.pcapng")
	out, errOut, st := run(t, "run", "--profile", "emu", "--cases", "MRC-RSP-SACK-101,MRC-WIRE-UDP-101,MRC-REQ-OP-101",
		"--format", "json", "--capture", capFile)
	if st != 0 {
		t.Fatalf("run --profile emu: status %d, %s\n%s", st, errOut, out)
	}
	var rep struct {
		PICS struct {
			Profile string `json:"profile"`
		} `json:"pics"`
		Summary struct {
			Result string `json:"result"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.PICS.Profile != "emu" || rep.Summary.Result != "PASS" {
		t.Errorf("report: profile %q, result %q", rep.PICS.Profile, rep.Summary.Result)
	}
	dec := run1(t, "decode", "--stats", capFile)
	if !strings.Contains(dec, "note: the capture fits the emu preset better (--profile emu)") {
		t.Errorf("the run's frames are not emu-encoded; decode --stats:\n%s", dec)
	}
	if out, _, st := run(t, "decode", "--profile", "emu", capFile); st != 0 || strings.Contains(out, "!") {
		t.Errorf("decode --profile emu of the run's capture: status %d\n%s", st, out)
	}
}

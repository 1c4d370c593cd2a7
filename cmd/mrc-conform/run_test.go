package main

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunReference: `mrc-conform run` with no flags runs the whole active
// suite against the built-in reference and exits 0 with a summary (issue
// #7 item 9).
func TestRunReference(t *testing.T) {
	out, errs, status := run(t, "run")
	if status != 0 {
		t.Fatalf("exit status %d\n%s\n%s", status, out, errs)
	}
	for _, want := range []string{"active cases against inproc", "MRC-LR-RTX-101", "RESULT PASS (exit status 0)"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	pics := filepath.Join(dir, "pics.json")
	if err := os.WriteFile(pics, []byte(`{"pics_version": 1, "features": {}, "unsupported_cases": ["MRC-LR-RTX-101"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"run", "--fault", "go-back-n", "--cases", "MRC-LR-RTX-101"}, 1},
		{[]string{"run", "--cases", "MRC-LR-RTX-101", "--pics", pics}, 127},
		{[]string{"run", "--cases", "MRC-NOPE-*"}, 2},
		{[]string{"run", "--fault", "gremlins"}, 2},
		{[]string{"run", "--transport", "carrier-pigeon"}, 2},
		{[]string{"run", "--transport", "udp"}, 2},
		{[]string{"run", "--transport", "afpacket", "--iface", "lo"}, 2},
		{[]string{"run", "--format", "pdf"}, 2},
		{[]string{"run", "--transport", "udp", "--ipv6", "--peer", "[::1]:1", "--control", "unix:x"}, 2},
		{[]string{"run", "--transport", "udp", "--peer", "[::1]:1", "--control", "unix:x", "--tester-ip", "fd00::zz"}, 2},
		{[]string{"run", "stray-argument"}, 2},
		{[]string{"run", "--transport", "udp", "--peer", "127.0.0.1:1", "--control", filepath.Join(dir, "nobody.sock")}, 2},
	} {
		if _, errs, status := run(t, c.args...); status != c.want {
			t.Errorf("%v: exit status %d, want %d\n%s", c.args, status, c.want, errs)
		}
	}
}

func TestRunOutputs(t *testing.T) {
	dir := t.TempDir()
	report, capture := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.pcapng")
	out, errs, status := run(t, "run", "--cases", "MRC-RSP-*", "--format", "json", "-o", report, "--capture", capture)
	if status != 0 {
		t.Fatalf("exit status %d: %s", status, errs)
	}
	if !strings.Contains(out, "RESULT PASS") || !strings.Contains(out, "report in "+report) {
		t.Errorf("terminal summary:\n%s", out)
	}
	var doc struct {
		Mode  string `json:"mode"`
		Cases []struct {
			ID      string `json:"id"`
			Verdict string `json:"verdict"`
		} `json:"cases"`
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Mode != "active" || len(doc.Cases) == 0 {
		t.Fatalf("report %v: %s", err, b[:min(len(b), 300)])
	}
	// The capture is a pcapng file the passive judge can read.
	if _, errs, status := run(t, "judge", "--pics", "default", capture); status == 2 {
		t.Errorf("judging the run's capture: %s", errs)
	}
	out, _, _ = run(t, "run", "--cases", "MRC-REQ-OP-101", "--format", "junit")
	if !strings.Contains(out, "<testsuites") {
		t.Errorf("JUnit to standard output:\n%s", out)
	}
}

// TestRunIPv6: the suite runs over IPv6 in process (--ipv6), where the
// SRv6 case applies, and over the UDP tunnel against a reference peer on
// ::1 with an IPv6 address, the tester taking its IPv6 address from
// --tester-ip.
func TestRunIPv6(t *testing.T) {
	out, errs, status := run(t, "run", "--ipv6", "--cases", "MRC-WIRE-ENC-101,MRC-RSP-RCV-101", "--format", "json")
	var rep struct {
		Cases []struct {
			ID      string `json:"id"`
			Verdict string `json:"verdict"`
		} `json:"cases"`
	}
	if status != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Cases) != 2 {
		t.Fatalf("run --ipv6: exit status %d\n%s\n%s", status, out, errs)
	}
	for _, c := range rep.Cases {
		if c.Verdict != "PASS" {
			t.Errorf("run --ipv6: %s %s", c.ID, c.Verdict)
		}
	}
	if testing.Short() {
		return
	}
	tun, ctl := referencePeerAt(t, "[::1]:0", netip.MustParseAddr("fd00::2"))
	out, errs, status = run(t, "run", "--transport", "udp", "--peer", tun.String(),
		"--control", ctl, "--cases", "MRC-WIRE-ENC-101,MRC-RSP-RCV-101", "--format", "json")
	if status != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Cases) != 2 {
		t.Fatalf("run --transport udp over IPv6: exit status %d\n%s\n%s", status, out, errs)
	}
	for _, c := range rep.Cases {
		if c.Verdict != "PASS" {
			t.Errorf("udp over IPv6: %s %s", c.ID, c.Verdict)
		}
	}
	if _, errs, status := run(t, "run", "--transport", "udp", "--peer", tun.String(), "--control", ctl,
		"--tester-ip", "10.0.0.1", "--cases", "MRC-RSP-RCV-101"); status != 2 || !strings.Contains(errs, "IP version") {
		t.Errorf("an IPv6 IUT and only an IPv4 tester address: exit status %d, want 2\n%s", status, errs)
	}
}

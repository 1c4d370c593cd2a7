//go:build linux

package conformance

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/internal/testenv"
	"github.com/openmrc/mrc/netio"
)

// TestCutCaptureFromDumpcap: the loss scenario's frames at point tx, sent
// on lo through an AF_PACKET socket and captured there by dumpcap -s 128
// (the real capture tool: one interface, headers kept, payloads and ICRCs
// cut), are judged from their headers: the requester's cases get the
// whole simulator capture's verdicts and observation counts, and a note
// counts the writes judged so. Root and dumpcap.
func TestCutCaptureFromDumpcap(t *testing.T) {
	dumpcap := testenv.LookPath(t, "dumpcap")
	testenv.Root(t)
	frames, ifs := readFrames(t, "../pcap/testdata/scenarios/loss.pcapng")
	var tx [][]byte
	for _, f := range frames {
		if ifs[f.Interface].Point == "tx" {
			tx = append(tx, f.Data)
		}
	}
	file := filepath.Join(t.TempDir(), "lo.pcapng")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, dumpcap, "-i", "lo", "-s", "128", "-f", "udp port 4791",
		"-a", "packets:"+strconv.Itoa(len(tx)), "-w", file)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var said []string
	// dumpcap says which file it writes once it captures.
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "File: ") {
		said = append(said, lines.Text())
	}
	a, err := netio.OpenAFPacket([]string{"lo"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, b := range tx {
		if err := a.WriteFrame(0, b); err != nil {
			t.Fatal(err)
		}
	}
	for lines.Scan() {
		said = append(said, lines.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("dumpcap: %v: %q", err, said)
	}
	whole, err := JudgeFile("../pcap/testdata/scenarios/loss.pcapng", Options{Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := JudgeFile(file, Options{Today: testDay})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"MRC-LR-RTX-001", "MRC-LR-RTX-003", "MRC-REQ-PSN-001", "MRC-REQ-PSN-002", "MRC-WIMM-ORD-001", "MRC-WIRE-MSG-001", "MRC-WIRE-PAY-001"} {
		w, _ := whole.Result(id)
		if g, _ := rep.Result(id); g.Verdict != w.Verdict || g.Checked != w.Checked {
			t.Errorf("%s %s over %d from dumpcap -s 128, whole %s over %d", id, g.Verdict, g.Checked, w.Verdict, w.Checked)
		}
	}
	if !strings.Contains(strings.Join(rep.Capture.Notes, "\n"), "writes cut by the snap length after their headers were judged") {
		t.Errorf("notes %q, want the writes judged from their headers counted", rep.Capture.Notes)
	}
}

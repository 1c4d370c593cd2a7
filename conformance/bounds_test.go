package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/openmrc/mrc/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/conformance/internal/longconn"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// TestStateBounded floods the judge with PSNs that are never acknowledged
// and with connections to many QPs: the tracked state stops at its bounds,
// the report says so, and no case can PASS on incomplete state.
func TestStateBounded(t *testing.T) {
	p := wire.Packet{IsIPv6: true}
	p.IP6 = wire.IPv6{TrafficClass: 4<<2 | 2, HopLimit: 64, Src: [16]byte{0xfd, 15: 1}, Dst: [16]byte{0xfd, 15: 2}}
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: 0x10, AckReq: true}
	p.RETH = wire.RETH{DMALength: 4}
	p.Payload = []byte{1, 2, 3, 4}
	frame, err := wire.Default.Append(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	_, _, bth := p.Offsets()
	e := newEngine(referencePICS(t))
	in := &pcap.Interface{Point: "A", Plane: 0, LinkType: pcap.LinkTypeEthernet}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := MaxPSNsPerFlow + 2000
	for i := 0; i < n+MaxFlows+10; i++ {
		f := append([]byte(nil), frame...)
		psn, qp := uint32(i), uint32(0x10)
		if i >= n { // then one packet to each of many QPs
			psn, qp = 0, uint32(0x1000+i)
		}
		f[bth+5], f[bth+6], f[bth+7] = byte(qp>>16), byte(qp>>8), byte(qp)
		f[bth+9], f[bth+10], f[bth+11] = byte(psn>>16), byte(psn>>8), byte(psn)
		var q wire.Packet
		if err := wire.Default.Decode(f, &q); err != nil {
			t.Fatal(err)
		}
		icrc := wire.Default.ComputeICRC(f, &q)
		f[len(f)-4], f[len(f)-3], f[len(f)-2], f[len(f)-1] = byte(icrc), byte(icrc>>8), byte(icrc>>16), byte(icrc>>24)
		e.frame(&pcap.Frame{Number: i + 1, Timestamp: start.Add(time.Duration(i) * time.Microsecond), Data: f}, in)
	}
	e.finish()
	flows := 0
	for _, pt := range e.points {
		for _, fl := range pt.flows {
			flows++
			if fl.psns.len() > MaxPSNsPerFlow || len(fl.psns.ring) > MaxPSNsPerFlow || fl.arrived.len() > MaxPSNsPerFlow || len(fl.arrived.ring) > MaxPSNsPerFlow {
				t.Errorf("flow %s holds %d PSNs", fl.key, fl.psns.len())
			}
		}
	}
	if flows > MaxFlows {
		t.Errorf("%d flows tracked, bound %d", flows, MaxFlows)
	}
	rep := e.report(&CaptureInfo{}, nil, testDay)
	notes := strings.Join(rep.Capture.Notes, "\n")
	if !strings.Contains(notes, "state bound reached") {
		t.Errorf("no note of the bound: %q", notes)
	}
	for _, r := range rep.Results {
		if r.Verdict == Pass {
			t.Errorf("%s PASSes on bounded state", r.Case.ID)
		}
	}
}

// TestJudgeMemoryFlat (issue 12: peak memory does not grow with the length
// of a connection): one connection of 100 k frames and one of 400 k
// (conformance/internal/longconn), each judged as the CLI judges them
// (JudgeFile, one worker and two) in a process of its own, whose peak
// resident set (VmHWM) is read at the end. Four times the frames may cost
// at most 1.5 times the memory, and never 64 MiB.
func TestJudgeMemoryFlat(t *testing.T) {
	if path := os.Getenv(peakEnv); path != "" {
		judgeAndReportPeak(t, path)
		return
	}
	if runtime.GOOS != "linux" {
		testenv.Unavailable(t, "peak memory is read from /proc/self/status (Linux)")
	}
	dir := t.TempDir()
	const short, long = 100_000, 400_000
	files := map[int]string{}
	for _, n := range []int{short, long} {
		files[n] = filepath.Join(dir, strconv.Itoa(n)+".pcapng")
		f, err := os.Create(files[n])
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		if _, err := longconn.Write(w, n); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, jobs := range []int{1, 2} {
		a, b := childPeak(t, files[short], jobs), childPeak(t, files[long], jobs)
		t.Logf("jobs=%d: peak RSS %d KiB for %d frames, %d KiB for %d", jobs, a, short, b, long)
		if b*2 > a*3 || b >= 64<<10 {
			t.Errorf("jobs=%d: peak RSS %d KiB for %d frames of one connection, %d KiB for %d: want at most 1.5 times as much and under 64 MiB",
				jobs, a, short, b, long)
		}
	}
}

// peakEnv names the capture a child process of TestJudgeMemoryFlat judges;
// peakJobsEnv its number of workers.
const (
	peakEnv     = "MRC_TEST_PEAK_CAPTURE"
	peakJobsEnv = "MRC_TEST_PEAK_JOBS"
)

// childPeak runs the test binary on one capture and returns the peak
// resident set it printed, in KiB.
func childPeak(t *testing.T, path string, jobs int) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestJudgeMemoryFlat$", "-test.count=1")
	cmd.Env = append(os.Environ(), peakEnv+"="+path, peakJobsEnv+"="+strconv.Itoa(jobs))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child judging %s: %v\n%s", path, err, out)
	}
	for _, line := range bytes.Split(out, []byte("\n")) {
		if v, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("peak-rss-kib ")); ok {
			n, err := strconv.Atoi(string(v))
			if err == nil && n > 0 {
				return n
			}
		}
	}
	t.Fatalf("child judging %s printed no peak:\n%s", path, out)
	return 0
}

// judgeAndReportPeak is the child: it judges path and prints its peak
// resident set.
func judgeAndReportPeak(t *testing.T, path string) {
	jobs, _ := strconv.Atoi(os.Getenv(peakJobsEnv))
	rep, err := JudgeFile(path, Options{Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Capture.Frames == 0 {
		t.Fatal("nothing judged")
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Printf("peak-rss-kib %s\n", strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
}

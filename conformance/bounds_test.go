package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/openmrc/mrc/internal/testenv"
	"net/netip"
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

// The tests of each named limit on the judge's state (engine.go's bounds,
// MaxInterfaces, maxSnapshots) beside TestStateBounded's MaxPSNsPerFlow
// and MaxFlows: a crafted input drives the judge past the limit; the state
// stops there, one note says so, and nothing panics.

// limitWrite is a write of 4 bytes to D's QP, PSN psn on EV ev; AckReq
// clear, so that it asks no ACK (a table of its own).
func limitWrite(psn, ev uint32) *wire.Packet {
	p := &wire.Packet{}
	p.IP6.TrafficClass = 4<<2 | 2
	p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: sceneDQP, PSN: psn & wire.PSNMask}
	p.METH = wire.METH{MSN: uint16(psn)}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: 4}
	p.Payload = []byte{1, 2, 3, 4}
	p.SetEV(ev, wire.EVModeSTEV)
	return p
}

// limitFrame is p from fd00::1:src (src 1 and 2 are T and D: fd00::1 and
// fd00::2) to D, as bytes.
func limitFrame(t testing.TB, src uint16, p *wire.Packet) []byte {
	t.Helper()
	p.IsIPv6, p.IP6.HopLimit = true, 64
	p.IP6.Src, p.IP6.Dst = [16]byte{0xfd, 15: byte(src)}, [16]byte{0xfd, 15: sceneD}
	if src > sceneD {
		p.IP6.Src = [16]byte{0xfd, 13: 1, 14: byte(src >> 8), 15: byte(src)}
	}
	b, err := wire.Default.Append(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// feed judges frame b, 1 µs after the scene's last frame.
func (s *scene) feed(b []byte) {
	s.n++
	s.ns += 1000
	f := pcap.Frame{Number: s.n, Interface: s.iface, Timestamp: s.start.Add(time.Duration(s.ns)), Data: b, Length: len(b)}
	if s.rec != nil {
		if err := s.rec.WriteFrame(&f); err != nil {
			s.t.Fatal(err)
		}
		return
	}
	s.e.frame(&f, s.in)
}

// feedAllocs judges frames, one per run, and returns the allocations
// per frame after the first (testing.AllocsPerRun's warm-up).
func (s *scene) feedAllocs(frames [][]byte) float64 {
	i := 0
	return testing.AllocsPerRun(len(frames)-1, func() {
		s.feed(frames[i])
		i++
	})
}

// notesWith returns the notes of rep holding text.
func notesWith(rep *Report, text string) []string {
	var n []string
	for _, s := range rep.Capture.Notes {
		if strings.Contains(s, text) {
			n = append(n, s)
		}
	}
	return n
}

// wantNoteOnce fails unless exactly one note of rep holds text.
func wantNoteOnce(t *testing.T, rep *Report, text string) {
	t.Helper()
	if n := notesWith(rep, text); len(n) != 1 {
		t.Errorf("%d notes with %q, want 1; notes: %q", len(n), text, rep.Capture.Notes)
	}
}

// onlyFlow returns the one connection at point D.
func (s *scene) onlyFlow() *flow {
	s.t.Helper()
	pt := s.e.points["D"]
	if pt == nil || len(pt.flows) != 1 {
		s.t.Fatalf("want one connection at D, have %v", pt)
	}
	for _, fl := range pt.flows {
		return fl
	}
	return nil
}

// TestLimitEVsPerFlow: a requester spraying its writes over more than
// MaxEVsPerFlow EVs, each SACKed at once (so that no other table fills):
// the connection remembers MaxEVsPerFlow EVs, and a note says its table
// is full.
func TestLimitEVsPerFlow(t *testing.T) {
	s := newScene(t, scenePICS)
	for i := range uint32(MaxEVsPerFlow + 200) {
		s.feed(limitFrame(t, sceneT, limitWrite(i, 0x100+i)))
		s.sack(i, i)
	}
	if n := len(s.onlyFlow().evs); n != MaxEVsPerFlow {
		t.Errorf("%d EVs remembered, want MaxEVsPerFlow (%d)", n, MaxEVsPerFlow)
	}
	rep := s.report()
	wantNoteOnce(t, rep, fmt.Sprintf("state bound reached: a connection's table reached %d entries", MaxEVsPerFlow))
	if n := notesWith(rep, "state bound"); len(n) != 1 {
		t.Errorf("notes of bounds %q, want MaxEVsPerFlow's alone", n)
	}
}

// outOfWindow returns n writes T→D from PSN 200 on, beyond D's window
// (scenePICS: 128 PSNs) once D has SACKed PSN 0 (inWindow), with no SACK
// moving it: each waits in D's table of out-of-window arrivals for its
// PSN_OOR_WINDOW NACK.
func outOfWindow(t testing.TB, from, n int) [][]byte {
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = limitFrame(t, sceneT, limitWrite(uint32(200+from+i), 0x100))
	}
	return frames
}

// inWindow is T's write of PSN 0 and D's SACK of it: D's window starts
// there.
func (s *scene) inWindow() {
	s.feed(limitFrame(s.t, sceneT, limitWrite(0, 0x100)))
	s.sack(0, 0)
}

// TestLimitPending: more than MaxPending out-of-window arrivals awaiting
// their NACK: the table keeps MaxPending, a note says it is full, and
// each later arrival, refused, allocates nothing.
func TestLimitPending(t *testing.T) {
	s := newScene(t, scenePICS)
	s.inWindow()
	for _, b := range outOfWindow(t, 0, MaxPending+10) {
		s.feed(b)
	}
	if a := s.feedAllocs(outOfWindow(t, MaxPending+10, 101)); a != 0 {
		t.Errorf("%.1f allocations per arrival the full table refuses, want 0", a)
	}
	if n := len(s.onlyFlow().oorPend); n != MaxPending {
		t.Errorf("%d out-of-window arrivals held, want MaxPending (%d)", n, MaxPending)
	}
	wantNoteOnce(t, s.report(), fmt.Sprintf("state bound reached: a connection's table reached %d entries", MaxPending))
}

// TestLimitEntries: the entries of all connections at MaxEntries. Reaching
// it from the traffic takes a million frames (each adds an entry or two),
// so the count starts 10 below it, between two recounts (every 1024
// frames): 20 out-of-window writes, of which the first 5 take the 10.
func TestLimitEntries(t *testing.T) {
	s := newScene(t, scenePICS)
	s.inWindow()
	s.e.entries = MaxEntries - 10
	for _, b := range outOfWindow(t, 0, 20) {
		s.feed(b)
	}
	// Each write takes two entries: its PSN at the requester, its
	// arrival at the responder.
	if n := len(s.onlyFlow().oorPend); n != 5 {
		t.Errorf("%d out-of-window arrivals held, want 5", n)
	}
	if s.e.entries != MaxEntries {
		t.Errorf("%d entries counted, want MaxEntries (%d)", s.e.entries, MaxEntries)
	}
	wantNoteOnce(t, s.report(), fmt.Sprintf("state bound reached: %d entries over all connections", MaxEntries))
}

// TestLimitNodes: writes from more than MaxNodes undeclared addresses, one
// node each: MaxNodes nodes are told apart, the others are one node,
// "(other)", a note says so, and each later address allocates nothing.
func TestLimitNodes(t *testing.T) {
	s := newScene(t, scenePICS)
	// The first frames past the bound keep the lumped connection's
	// findings (MaxFindings): allocations are counted after them.
	const warm = MaxNodes + 300
	frames := make([][]byte, warm+101)
	for i := range frames {
		// PSN i: the frames of the nodes lumped together are one
		// connection's, in order.
		frames[i] = limitFrame(t, uint16(0x100+i), limitWrite(uint32(i), 0x100))
	}
	for _, b := range frames[:warm] {
		s.feed(b)
	}
	if a := s.feedAllocs(frames[warm:]); a != 0 {
		t.Errorf("%.1f allocations per frame of a node past MaxNodes, want 0", a)
	}
	if n := len(s.e.nodeNames); n != MaxNodes {
		t.Errorf("%d nodes told apart, want MaxNodes (%d)", n, MaxNodes)
	}
	if n := s.e.node(netip.MustParseAddr("fd00::1:ffff")); n != "(other)" {
		t.Errorf("a new address is node %q, want (other)", n)
	}
	wantNoteOnce(t, s.report(), fmt.Sprintf("more than %d nodes", MaxNodes))
}

// TestLimitDiscardedSenders: IP fragments (WIRE-ENC-5, AMB-33) from more
// than MaxNodes undeclared addresses are counted against MaxNodes senders
// and "(other)", each later fragment allocates nothing, and the capture
// note names maxDiscardNamed senders and counts the others together.
func TestLimitDiscardedSenders(t *testing.T) {
	s := newScene(t, scenePICS)
	const warm = MaxNodes + 300
	frames := make([][]byte, warm+101)
	for i := range frames {
		frames[i] = asFragment(limitFrame(t, uint16(0x100+i), limitWrite(uint32(i), 0x100)))
	}
	for _, b := range frames[:warm] {
		s.feed(b)
	}
	if a := s.feedAllocs(frames[warm:]); a != 0 {
		t.Errorf("%.1f allocations per fragment, want 0", a)
	}
	if n := len(s.e.discarded); n != MaxNodes+1 {
		t.Errorf("fragments counted against %d senders, want MaxNodes+1 (%d)", n, MaxNodes+1)
	}
	if n := s.e.discarded[discardKey{"(other)", "D", discardFragment}]; n != len(frames)-MaxNodes {
		t.Errorf("%d fragments from (other), want %d", n, len(frames)-MaxNodes)
	}
	note := notesWith(s.report(), "IP fragments")
	want := fmt.Sprintf("%d IP fragments were discarded and not judged (WIRE-ENC-5, AMB-33): %d from (other) at D, 1 from ", len(frames), len(frames)-MaxNodes)
	wantEnd := fmt.Sprintf(", %d from %d other senders and points", MaxNodes-(maxDiscardNamed-1), MaxNodes-(maxDiscardNamed-1))
	if len(note) != 1 || !strings.HasPrefix(note[0], want) || !strings.HasSuffix(note[0], wantEnd) || strings.Count(note[0], " from ") != maxDiscardNamed+1 {
		t.Errorf("notes %q, want one starting %q, naming %d senders, ending %q", note, want, maxDiscardNamed, wantEnd)
	}
}

// TestLimitPoints: frames at more than MaxPoints capture points (an
// interface each): MaxPoints are judged, a note says the others are not,
// and each later frame allocates nothing.
func TestLimitPoints(t *testing.T) {
	s := newScene(t, scenePICS)
	b := limitFrame(t, sceneT, limitWrite(0, 0x100))
	at := func(i int) {
		s.iface, s.in = i, &pcap.Interface{Point: fmt.Sprintf("P%d", i), Plane: 0, LinkType: pcap.LinkTypeEthernet}
	}
	for i := range MaxPoints + 4 {
		at(i)
		s.feed(b)
	}
	a := testing.AllocsPerRun(100, func() { s.feed(b) })
	if a != 0 {
		t.Errorf("%.1f allocations per frame past MaxPoints, want 0", a)
	}
	if n := len(s.e.points); n != MaxPoints {
		t.Errorf("%d capture points, want MaxPoints (%d)", n, MaxPoints)
	}
	wantNoteOnce(t, s.report(), fmt.Sprintf("more than %d capture points", MaxPoints))
}

// TestLimitInterfaces: a capture of more than MaxInterfaces interfaces,
// all at point D (D/plane0, D/plane1, …: interfaces of one name are two
// capture points, TestSameNamedInterfacesTwoHosts): the judge remembers
// where MaxInterfaces of them are
// (views, viewPts) and places the frames of the others each time, with
// the same answer: every frame is judged at D, with one worker or two
// (the merger orders the first MaxInterfaces interfaces' frames by time,
// the others' in file order). A cache, not a state bound: no note.
func TestLimitInterfaces(t *testing.T) {
	ifaces := make([]pcap.Interface, MaxInterfaces+8)
	for i := range ifaces {
		ifaces[i] = pcap.Interface{Name: pcap.InterfaceName("D", i), LinkType: pcap.LinkTypeEthernet}
	}
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, ifaces...)
	if err != nil {
		t.Fatal(err)
	}
	s := newScene(t, scenePICS)
	s.rec = w
	for i := range uint32(64) {
		s.iface = []int{0, MaxInterfaces - 1, MaxInterfaces, len(ifaces) - 1}[i%4]
		s.feed(limitFrame(t, sceneT, limitWrite(i, 0x100)))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := pcap.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	e, err := judgeSequential(r, "interfaces", Options{}, s.e.pics)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.views) > MaxInterfaces || len(e.viewPts) > MaxInterfaces {
		t.Errorf("%d interfaces' views, %d points remembered, want at most MaxInterfaces (%d)", len(e.views), len(e.viewPts), MaxInterfaces)
	}
	if pt := e.points["D"]; len(e.points) != 1 || pt == nil || pt.n != 64 {
		t.Errorf("frames judged at %v, want all 64 at D", e.points)
	}
	for _, jobs := range []int{0, 2} {
		r, err := pcap.NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Judge(r, "interfaces", Options{PICS: s.e.pics, Today: testDay, Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Capture.Frames != 64 || len(notesWith(rep, "state bound")) != 0 {
			t.Errorf("jobs %d: %d frames judged, notes %q; want 64 and no bound", jobs, rep.Capture.Frames, rep.Capture.Notes)
		}
	}
}

// recordScene returns a scene under scenePICS that writes its frames to a
// capture of one interface, D, with its writer and the buffer that holds
// the capture once the writer is flushed.
func recordScene(t *testing.T) (*scene, *pcap.Writer, *bytes.Buffer) {
	buf := new(bytes.Buffer)
	w, err := pcap.NewWriter(buf, pcap.Interface{Name: "D", LinkType: pcap.LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	s := newScene(t, scenePICS)
	s.rec = w
	return s, w, buf
}

// failingWrites is a capture at D of writes from senders nodes, n each,
// every one with DSCP 0 (a WIRE-DSCP-1 failure of its sender's).
func failingWrites(t *testing.T, senders, n int) []byte {
	s, w, buf := recordScene(t)
	for k := range n {
		for i := range senders {
			p := limitWrite(uint32(k), 0x100)
			p.IP6.TrafficClass = 0
			s.feed(limitFrame(t, uint16(0x100+i), p))
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// judgeBoth judges capture b under scenePICS with one worker and with
// two, requires the same notes of both, and returns the first report and
// its engine.
func judgeBoth(t *testing.T, b []byte) (*Report, *engine) {
	t.Helper()
	p, err := ParsePICS([]byte(scenePICS))
	if err != nil {
		t.Fatal(err)
	}
	var reps [2]*Report
	for i, jobs := range []int{0, 2} {
		r, err := pcap.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if reps[i], err = Judge(r, "limit", Options{PICS: p, Today: testDay, Jobs: jobs}); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := strings.Join(reps[0].Capture.Notes, "\n"), strings.Join(reps[1].Capture.Notes, "\n"); a != b {
		t.Errorf("notes with one worker:\n%s\nwith two:\n%s", a, b)
	}
	r, err := pcap.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	e, err := judgeSequential(r, "limit", Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	e.finish()
	return reps[0], e
}

// TestLimitKeptFindings: more failures than MaxKeptFindings findings can
// show: MaxFindings writes from each of 71 senders, each write failing
// three observations the PICS leaves to the capture (WIRE-DSCP-1 and -2
// on its DSCP, WIRE-BTH-5), so 213 rows of MaxFindings: MaxKeptFindings
// are kept, the counts stay whole, and a note says the later findings are
// not kept.
func TestLimitKeptFindings(t *testing.T) {
	const senders = MaxKeptFindings/(3*MaxFindings) + 5
	rep, e := judgeBoth(t, failingWrites(t, senders, MaxFindings))
	if e.kept != MaxKeptFindings {
		t.Errorf("%d findings kept, want MaxKeptFindings (%d)", e.kept, MaxKeptFindings)
	}
	failed := 0
	for _, row := range e.rows {
		failed += row[cDSCP].bad
	}
	if failed != senders*MaxFindings {
		t.Errorf("%s: %d failures counted, want every write's (%d)", cDSCP, failed, senders*MaxFindings)
	}
	wantNoteOnce(t, rep, fmt.Sprintf("more than %d findings", MaxKeptFindings))
}

// TestLimitSnapshots: more connections failing than maxSnapshots
// timelines: maxSnapshots are kept and a note says the later ones are not.
func TestLimitSnapshots(t *testing.T) {
	rep, e := judgeBoth(t, failingWrites(t, maxSnapshots+8, 1))
	if len(e.snaps) != maxSnapshots || len(rep.Timelines) > maxSnapshots {
		t.Errorf("%d timelines kept, %d reported, want maxSnapshots (%d)", len(e.snaps), len(rep.Timelines), maxSnapshots)
	}
	wantNoteOnce(t, rep, fmt.Sprintf("more than %d connections failed", maxSnapshots))
}

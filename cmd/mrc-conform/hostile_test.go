package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openmrc/mrc/conformance/active"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/internal/testenv"
	"github.com/openmrc/mrc/netio"
	"github.com/openmrc/mrc/peer"
)

// The test executable doubles as mrc-conform: main is
// os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr)), and so is this,
// so tests see the real process's exit status, stdout and stderr, and
// its peak memory.
func init() {
	if os.Getenv("MRC_CONFORM_AS_MAIN") == "1" {
		code := dispatch(os.Args[1:], os.Stdout, os.Stderr)
		testenv.WritePeakRSS()
		os.Exit(code)
	}
}

// procResult is what one mrc-conform process did.
type procResult struct {
	stdout, stderr string
	code           int
	maxRSSMiB      float64
	took           time.Duration
}

// mrcConform runs mrc-conform as a process with args, killed after limit.
func mrcConform(t *testing.T, limit time.Duration, args ...string) procResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	peak := filepath.Join(t.TempDir(), "peak-rss")
	cmd.Env = append(os.Environ(), "MRC_CONFORM_AS_MAIN=1", testenv.PeakRSSEnv+"="+peak)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err := cmd.Run()
	r := procResult{stdout: o.String(), stderr: e.String(), took: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("mrc-conform %q did not end within %v\nstdout:\n%s\nstderr:\n%s", args, limit, r.stdout, r.stderr)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("mrc-conform %q: %v", args, err)
	}
	r.maxRSSMiB = testenv.PeakRSSMiB(peak)
	return r
}

var resultLine = regexp.MustCompile(`(?m)^RESULT ([A-Z-]+) \(exit status (\d+)\)`)

// checkResultLine asserts that a text report's RESULT line names want and
// the status the process exited with.
func checkResultLine(t *testing.T, r procResult, want string) {
	t.Helper()
	m := resultLine.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Errorf("no RESULT line; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		return
	}
	if printed, _ := strconv.Atoi(m[2]); printed != r.code {
		t.Errorf("RESULT line says exit status %d, the process exited %d", printed, r.code)
	}
	if m[1] != want {
		t.Errorf("RESULT %s, want %s\n%s", m[1], want, r.stdout)
	}
}

// ceilingMiB is the peak memory no hostile counterpart may push the
// tester past.
const ceilingMiB = 100

func checkCeiling(t *testing.T, r procResult) {
	t.Helper()
	if r.maxRSSMiB < 0 && runtime.GOOS != "linux" {
		t.Logf("peak memory is measured on Linux only (VmHWM)")
		return
	}
	if r.maxRSSMiB < 0 || r.maxRSSMiB > ceilingMiB {
		t.Errorf("peak RSS %.0f MiB, over the %d MiB ceiling (or not measured)", r.maxRSSMiB, ceilingMiB)
	}
}

// A fakeIUT is a hostile or broken control peer: hello succeeds (unless
// the behaviour says otherwise) with a 2-plane IPv4 IUT, and every other
// request gets what answer says.
type fakeIUT struct {
	addr string
	// answer returns the bytes to write for request n (1-based, hello
	// included), or nil to close the connection; stall makes it write
	// them and then nothing more.
	answer func(n int, req control.Request) (reply []byte, stall bool)
	mu     sync.Mutex
	n      int
}

// helloReply is a well-formed hello answer for req.
func helloReply(req control.Request) []byte {
	h := control.HelloResult{Version: control.Version, Methods: control.Methods,
		Implementation: control.Implementation{Vendor: "hostile", Model: "fake IUT"},
		Ports:          []control.Port{{Port: 1, MAC: "02:4d:52:50:00:10", IP: "10.0.0.2"}, {Port: 2, MAC: "02:4d:52:50:00:11", IP: "10.0.0.2"}}}
	return reply(req.ID, h, nil)
}

func reply(id uint64, result any, e *control.Error) []byte {
	resp := control.Response{ID: id, Error: e}
	if e == nil {
		resp.Result, _ = json.Marshal(result)
	}
	b, _ := json.Marshal(resp)
	return append(b, '\n')
}

// startFakeIUT serves answer on a Unix socket until the test ends.
func startFakeIUT(t *testing.T, answer func(n int, req control.Request) ([]byte, bool)) *fakeIUT {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeIUT{addr: "unix:" + sock, answer: answer}
	done := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() {
		close(done)
		l.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				go func() { <-done; c.Close() }()
				f.serve(c, done)
			}()
		}
	}()
	return f
}

func (f *fakeIUT) serve(c net.Conn, done chan struct{}) {
	r := bufio.NewReaderSize(c, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var req control.Request
		_ = json.Unmarshal(line, &req)
		f.mu.Lock()
		f.n++
		n := f.n
		f.mu.Unlock()
		b, stall := f.answer(n, req)
		if b != nil {
			if _, err := c.Write(b); err != nil {
				return
			}
		}
		if stall {
			<-done
			return
		}
		if b == nil {
			return
		}
	}
}

// deadPort returns a loopback UDP address nobody listens on.
func deadPort(t *testing.T) string {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := c.LocalAddr().String()
	c.Close()
	return a
}

// referencePeer runs the reference peer (package peer over the netio
// tunnel, as mrc-peer does) with MRC address 10.0.0.2 and its tunnel on
// the IPv4 loopback, until the test ends, and returns its tunnel and
// control addresses.
func referencePeer(t *testing.T) (tunnel *net.UDPAddr, ctl string) {
	return referencePeerAt(t, "127.0.0.1:0", netip.MustParseAddr("10.0.0.2"))
}

// referencePeerAt is referencePeer with the tunnel on listen and the MRC
// address ip.
func referencePeerAt(t *testing.T, listen string, ip netip.Addr) (tunnel *net.UDPAddr, ctl string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "peer.sock")
	macs := [][6]byte{{2, 0x4d, 0x52, 0x50, 0, 0x10}, {2, 0x4d, 0x52, 0x50, 0, 0x11}}
	tun, err := netio.ListenTunnel(listen, "", macs)
	if err != nil {
		t.Fatal(err)
	}
	a, err := peer.New(peer.Config{MACs: macs, IP: ip, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := peer.NewRunner(a, tun)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- r.Run(ctx) }()
	go func() { done <- control.Serve(ctx, l, r.Handler()) }()
	t.Cleanup(func() {
		cancel()
		<-done
		<-done
		tun.Close()
	})
	return tun.LocalAddr(), "unix:" + sock
}

// spray sends datagrams from a socket of its own (bound to from, or any
// loopback port) to every address in to until stop is closed: each a
// valid tunnel shim (type typ, plane 0) and a seeded random frame, whose
// sizes cycle through sizes. It returns the count of datagrams sent so
// far and a function that waits for the end and returns the total.
func spray(t *testing.T, from string, to []*net.UDPAddr, typ byte, sizes []int, seed uint64, stop chan struct{}) (*atomic.Int64, func() int) {
	return sprayAt(t, from, to, typ, sizes, seed, 0, stop)
}

// sprayAt is spray at no more than rate datagrams a second (0: as fast
// as it can).
func sprayAt(t *testing.T, from string, to []*net.UDPAddr, typ byte, sizes []int, seed uint64, rate int, stop chan struct{}) (*atomic.Int64, func() int) {
	t.Helper()
	la, err := net.ResolveUDPAddr("udp", from)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.ListenUDP("udp", la)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 14))
	b := make([]byte, 8+slices.Max(sizes))
	copy(b, "MRCT\x01")
	b[5] = typ
	sent := new(atomic.Int64)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer c.Close()
		start := time.Now()
		for k := 0; ; k++ {
			select {
			case <-stop:
				return
			default:
			}
			if rate > 0 && k%100 == 0 {
				if ahead := time.Duration(k)*time.Second/time.Duration(rate) - time.Since(start); ahead > 0 {
					time.Sleep(ahead)
				}
			}
			d := b[:8+sizes[k%len(sizes)]]
			for i := 8; i < len(d); i += 8 {
				v := rng.Uint64()
				for j := i; j < min(i+8, len(d)); j++ {
					d[j], v = byte(v), v>>8
				}
			}
			for _, a := range to {
				if _, err := c.WriteToUDP(d, a); err == nil {
					sent.Add(1)
				}
			}
		}
	}()
	return sent, func() int { <-finished; return int(sent.Load()) }
}

// freeUDP returns a free loopback UDP address.
func freeUDP(t *testing.T) *net.UDPAddr {
	t.Helper()
	a, err := net.ResolveUDPAddr("udp", deadPort(t))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestHostileSpray (issue 14, findings 1 and 6): while a stranger sprays
// valid tunnel datagrams with random frames at both the tester's tunnel
// and the reference peer's, a run still PASSes: the tester reads only
// the peer (--peer) and the peer only the tester that its hello
// announced. Seeded; the seed is in the test.
func TestHostileSpray(t *testing.T) {
	peerTun, ctl := referencePeer(t)
	local := freeUDP(t)
	stop := make(chan struct{})
	// Shim hellos at the peer (a peer that learns its remote would take
	// the sprayer for its tester) and frames at both ends.
	// At a rate that leaves the two processes the CPU (their socket
	// buffers would overflow otherwise, losing the run's own frames, as on
	// any flooded network): what is checked is whose datagrams count.
	_, hellos := sprayAt(t, "127.0.0.1:0", []*net.UDPAddr{peerTun}, 1, []int{0}, 1, 5000, stop)
	_, frames := sprayAt(t, "127.0.0.1:0", []*net.UDPAddr{peerTun, local}, 0, []int{200}, 2, 5000, stop)
	time.Sleep(50 * time.Millisecond) // the peer has heard the sprayer first
	r := mrcConform(t, 60*time.Second, "run", "--transport", "udp", "--peer", peerTun.String(), "--local", local.String(),
		"--control", ctl, "--cases", "MRC-RSP-RCV-101,MRC-CMP-SND-101,"+active.WireCaseID)
	close(stop)
	nh, nf := hellos(), frames()
	t.Logf("%d hellos and %d frames sprayed; run took %v, peak RSS %.0f MiB", nh, nf, r.took.Round(time.Millisecond), r.maxRSSMiB)
	if nf < 200 {
		t.Fatalf("the sprayer sent only %d frames", nf)
	}
	if r.code != 0 {
		t.Errorf("exit status %d under a spray, want 0\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	checkResultLine(t, r, "PASS")
	checkCeiling(t, r)
}

// TestHostileFlood (issue 14, finding 2): a flood of oversized datagrams
// and of the largest frames, from the very address the tester takes for
// its peer, while the tester waits at hello, leaves its memory bounded
// (MaxFrame bytes per frame, netio; MaxBufferedFrames and
// MaxBufferedBytes buffered, active). The IUT then supports nothing:
// exit 127.
func TestHostileFlood(t *testing.T) {
	peerAddr := freeUDP(t)
	local := freeUDP(t)
	stop := make(chan struct{})
	// From the peer's own address, so that the tunnel's source check
	// lets them in: oversized ones (dropped by size) and the largest
	// frames (buffered up to the limits).
	count, sent := spray(t, peerAddr.String(), []*net.UDPAddr{local}, 0, []int{60000, netio.MaxFrame, netio.MaxFrame, netio.MaxFrame}, 3, stop)
	var answered atomic.Bool
	const floodN = 25000
	fake := startFakeIUT(t, func(n int, req control.Request) ([]byte, bool) {
		if req.Method == control.MethodHello {
			// The flood runs while the tester waits: 25,000 datagrams
			// (over 170 MiB) before hello is answered.
			for start, base := time.Now(), count.Load(); count.Load()-base < floodN && time.Since(start) < 45*time.Second; {
				time.Sleep(10 * time.Millisecond)
			}
			answered.Store(true)
			return helloReply(req), false
		}
		return reply(req.ID, nil, control.Errorf(control.CodeUnknownMethod, "%s", req.Method)), false
	})
	r := mrcConform(t, 90*time.Second, "run", "--transport", "udp", "--peer", peerAddr.String(), "--local", local.String(),
		"--control", fake.addr, "--control-timeout", "60s", "--cases", "MRC-RSP-RCV-101,MRC-LR-RTX-101")
	close(stop)
	n := sent()
	t.Logf("%d datagrams, a quarter of 60,000 bytes, the rest of %d; run took %v, peak RSS %.0f MiB (ceiling %d)", n, netio.MaxFrame,
		r.took.Round(time.Millisecond), r.maxRSSMiB, ceilingMiB)
	if !answered.Load() || n < floodN {
		t.Fatalf("the flood did not overlap the hello (%d datagrams, hello answered %v)", n, answered.Load())
	}
	checkCeiling(t, r)
	if r.code != 127 {
		t.Errorf("exit status %d, want 127\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	checkResultLine(t, r, "UNSUPPORTED")
}

// proxyTo returns a fakeIUT answer that forwards every request to the
// control server at ctl, until request n, which fail answers instead.
func proxyTo(t *testing.T, ctl string, n int, fail func(req control.Request) ([]byte, bool)) func(int, control.Request) ([]byte, bool) {
	t.Helper()
	var mu sync.Mutex
	var up *control.Conn
	return func(i int, req control.Request) ([]byte, bool) {
		if i >= n {
			return fail(req)
		}
		mu.Lock()
		defer mu.Unlock()
		if up == nil {
			c, err := control.Dial(context.Background(), ctl)
			if err != nil {
				return nil, false
			}
			up = c
			t.Cleanup(func() { c.Close() })
		}
		res, err := up.RoundTrip(context.Background(), req.Method, req.Params)
		var ce *control.Error
		if errors.As(err, &ce) {
			return reply(req.ID, nil, ce), false
		}
		if err != nil {
			return nil, false
		}
		return reply(req.ID, json.RawMessage(res), nil), false
	}
}

// TestHostileControl (issue 14): a control peer that answers garbage,
// truncated JSON, a huge line, a wrong id, hello with addresses the
// tester must not send to, stalls, disconnects, or fails in the middle of
// a run. Each ends in seconds with exit status 2, a message or verdict
// that names the cause, no frame sent where it must not go, and memory
// under a ceiling.
func TestHostileControl(t *testing.T) {
	peerTun, peerCtl := referencePeer(t)
	hello := func(edit func(h *control.HelloResult)) func(int, control.Request) ([]byte, bool) {
		return func(_ int, req control.Request) ([]byte, bool) {
			var h control.HelloResult
			b := helloReply(req)
			var resp control.Response
			_ = json.Unmarshal(b, &resp)
			_ = json.Unmarshal(resp.Result, &h)
			edit(&h)
			return reply(req.ID, h, nil), false
		}
	}
	at := func(n int, bad func(req control.Request) ([]byte, bool)) func(int, control.Request) ([]byte, bool) {
		return func(i int, req control.Request) ([]byte, bool) {
			if i == n {
				return bad(req)
			}
			if req.Method == control.MethodHello {
				return helloReply(req), false
			}
			return reply(req.ID, nil, control.Errorf(control.CodeUnknownMethod, "%s", req.Method)), false
		}
	}
	// --control-timeout is 1 s, short for the stalls, except for rows
	// whose answer takes a while to send.
	slowAnswers := map[string]string{"huge line at hello": "10s"}
	garbage := func(control.Request) ([]byte, bool) { return []byte("<html>502 Bad Gateway</html>\n"), false }
	truncated := func(control.Request) ([]byte, bool) { return []byte(`{"id":1,"result":{"vers`), false }
	huge := func(control.Request) ([]byte, bool) { return bytes.Repeat([]byte("A"), 5<<20), false }
	wrongID := func(req control.Request) ([]byte, bool) { return helloReply(control.Request{ID: req.ID + 7}), false }
	stall := func(control.Request) ([]byte, bool) { return nil, true }
	hangUp := func(control.Request) ([]byte, bool) { return nil, false }
	for _, c := range []struct {
		name   string
		answer func(int, control.Request) ([]byte, bool)
		real   bool   // the data path is the reference peer (else nobody)
		result string // RESULT line, "" when the run stops before a report
		cause  string // in stderr (no report) or stdout (the verdicts)
	}{
		{"garbage at hello", at(1, func(r control.Request) ([]byte, bool) { b, _ := garbage(r); return b, false }), false, "", "bad response line"},
		{"truncated JSON at hello", at(1, func(r control.Request) ([]byte, bool) { b, _ := truncated(r); return b, false }), false, "", "connection broken during hello"},
		{"huge line at hello", at(1, func(r control.Request) ([]byte, bool) { b, _ := huge(r); return b, true }), false, "", "line longer than 4194304 bytes"},
		{"wrong id at hello", at(1, wrongID), false, "", "response id 8 to request 1"},
		{"stall at hello", at(1, stall), false, "", "during hello"},
		{"hang-up at hello", at(1, hangUp), false, "", "connection broken during hello: EOF"},
		{"version mismatch", hello(func(h *control.HelloResult) { h.Version = 99 }), false, "", "version"},
		{"broadcast MACs", hello(func(h *control.HelloResult) {
			h.Ports[0].MAC, h.Ports[1].MAC = "ff:ff:ff:ff:ff:ff", "01:00:5e:00:00:01"
		}), false, "", "not unicast: refusing to send to it"},
		{"multicast IP", hello(func(h *control.HelloResult) { h.Ports[0].IP, h.Ports[1].IP = "224.0.0.1", "224.0.0.1" }), false, "", "not a unicast address"},
		{"garbage mid-run", proxyTo(t, peerCtl, 6, garbage), true, "ERROR", "bad response line"},
		{"stall mid-run", proxyTo(t, peerCtl, 6, stall), true, "ERROR", "i/o timeout"},
		{"hang-up mid-run", proxyTo(t, peerCtl, 6, hangUp), true, "ERROR", "connection broken"},
		{"internal errors mid-run", proxyTo(t, peerCtl, 6, func(req control.Request) ([]byte, bool) {
			return reply(req.ID, nil, control.Errorf(control.CodeInternal, "firmware assertion 0x1d")), false
		}), true, "ERROR", "firmware assertion 0x1d"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := startFakeIUT(t, c.answer)
			peerAddr := peerTun
			var datagrams func() int
			if !c.real {
				// Count what reaches the address the hello's IUT would be at.
				peerAddr, datagrams = countFrames(t)
			}
			r := mrcConform(t, 30*time.Second, "run", "--transport", "udp", "--peer", peerAddr.String(), "--control", fake.addr,
				"--control-timeout", cmp.Or(slowAnswers[c.name], "1s"), "--cases", "MRC-RSP-RCV-101,MRC-LR-RTX-101")
			t.Logf("exit %d in %v, peak RSS %.0f MiB", r.code, r.took.Round(time.Millisecond), r.maxRSSMiB)
			if r.code != 2 {
				t.Errorf("exit status %d, want 2\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if c.result != "" {
				checkResultLine(t, r, c.result)
				if !strings.Contains(r.stdout, c.cause) {
					t.Errorf("the verdicts do not name the cause %q:\n%s", c.cause, r.stdout)
				}
			} else if !strings.Contains(r.stderr, c.cause) || r.stdout != "" {
				t.Errorf("stderr does not name the cause %q (or stdout is not empty)\nstdout:\n%s\nstderr:\n%s", c.cause, r.stdout, r.stderr)
			}
			checkCeiling(t, r)
			if r.took > 15*time.Second {
				t.Errorf("took %v: a broken counterpart must be found in seconds", r.took)
			}
			if datagrams != nil {
				if n := datagrams(); n != 0 {
					t.Errorf("%d frames sent to the IUT although the run never got past hello", n)
				}
			}
		})
	}
}

// countFrames listens on a free UDP port and returns its address and a
// function that stops listening and tells how many MRC frames (not shim
// hellos) arrived there.
func countFrames(t *testing.T) (*net.UDPAddr, func() int) {
	pc, err := net.ListenUDP("udp", freeUDP(t))
	if err != nil {
		t.Fatal(err)
	}
	var frames atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 65536)
		for {
			n, _, err := pc.ReadFromUDP(b)
			if err != nil {
				return
			}
			if n > 8 && b[5] == 0 { // a frame, not the shim hello
				frames.Add(1)
			}
		}
	}()
	return pc.LocalAddr().(*net.UDPAddr), func() int { pc.Close(); <-done; return int(frames.Load()) }
}

// TestDeadDataPath (issue 14, finding 4): with --peer on a port where
// nothing answers (the IUT's control channel works), the suite is a
// setup fault found in seconds: exit 2, RESULT ERROR, and the verdicts
// say that no frame from the IUT arrived; no case FAILs.
func TestDeadDataPath(t *testing.T) {
	_, ctl := referencePeer(t)
	// The responder cases come first: each try waits for an answer, not
	// for a whole transfer (the requester cases would take 10 s).
	r := mrcConform(t, 120*time.Second, "run", "--transport", "udp", "--peer", deadPort(t), "--control", ctl,
		"--cases", "MRC-RSP-*,MRC-WIRE-*,MRC-LR-*,MRC-EV-*")
	t.Logf("exit %d in %v, peak RSS %.0f MiB", r.code, r.took.Round(time.Millisecond), r.maxRSSMiB)
	if r.code != 2 {
		t.Errorf("exit status %d, want 2\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	checkResultLine(t, r, "ERROR")
	if !strings.Contains(r.stdout, "not one frame from the IUT has reached the tester") || strings.Contains(r.stdout, " FAIL ") {
		t.Errorf("the verdicts do not name the dead data path, or a case FAILs:\n%s", r.stdout)
	}
	if r.took > 30*time.Second {
		t.Errorf("took %v: a dead data path must be found in seconds", r.took)
	}
	checkCeiling(t, r)
}

// TestTunnelAnnounce: the tester announces an address the peer can
// reach: its socket's own, or for an unspecified one the source address
// of the route to the peer.
func TestTunnelAnnounce(t *testing.T) {
	for _, c := range []struct {
		ip   net.IP
		peer string
		want string
	}{
		{net.IPv4(127, 0, 0, 1), "127.0.0.1:9", "127.0.0.1:5"},
		{net.IPv4zero, "127.0.0.1:9", "127.0.0.1:5"},
		{net.IPv6unspecified, "[::1]:9", "[::1]:5"},
	} {
		if got := tunnelAnnounce(&net.UDPAddr{IP: c.ip, Port: 5}, c.peer); got != c.want {
			t.Errorf("%v to %s: %s, want %s", c.ip, c.peer, got, c.want)
		}
	}
}

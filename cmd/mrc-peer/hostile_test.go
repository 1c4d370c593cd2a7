package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openmrc/mrc/conformance/active"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/internal/testenv"
	"github.com/openmrc/mrc/netio"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// The test executable doubles as mrc-peer (main is this), so the hostile
// tests see the real process: its exit status and its peak memory.
func init() {
	if os.Getenv("MRC_PEER_AS_MAIN") == "1" {
		// main, and the peak memory for the test.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		testenv.WritePeakRSS()
		os.Exit(code)
	}
}

// peerProc is an mrc-peer process.
type peerProc struct {
	cmd    *exec.Cmd
	peak   string
	ctl    string
	tunnel *net.UDPAddr
	stderr bytes.Buffer
}

// startPeer starts mrc-peer on a Unix control socket and a free loopback
// tunnel port, and waits until it answers.
func startPeer(t *testing.T) *peerProc {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tun := c.LocalAddr().(*net.UDPAddr)
	c.Close()
	p := &peerProc{ctl: "unix:" + sock, tunnel: tun, peak: filepath.Join(t.TempDir(), "peak-rss")}
	p.cmd = exec.Command(os.Args[0], "--control", p.ctl, "--listen", tun.String())
	p.cmd.Env = append(os.Environ(), "MRC_PEER_AS_MAIN=1", testenv.PeakRSSEnv+"="+p.peak)
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
	for i := 0; ; i++ {
		if conn, err := net.Dial("unix", sock); err == nil {
			conn.Close()
			return p
		}
		if i == 500 {
			t.Fatalf("mrc-peer did not start: %s", p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop ends the peer with SIGTERM and returns its exit status and peak
// RSS in MiB.
func (p *peerProc) stop(t *testing.T) (int, float64) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("mrc-peer did not stop on SIGTERM: %s", p.stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	return code, testenv.PeakRSSMiB(p.peak)
}

// hello says hello on a fresh control connection.
func (p *peerProc) hello(t *testing.T) (*control.HelloResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := control.Dial(ctx, p.ctl)
	if err != nil {
		return nil, err
	}
	cl := control.NewClient(c)
	defer cl.Close()
	return cl.Hello(ctx, "hostile test")
}

// TestPeerHostileConnections (issue 14, finding 6): a request line over
// control.MaxLine gets a bad_request answer before the connection
// closes; 40 connections each holding a 4 MiB partial line get at most
// control.MaxConns slots, the rest one resource_exhausted answer; memory
// stays under a ceiling (it reached 276 MB), and once they are gone a
// tester is served again.
func TestPeerHostileConnections(t *testing.T) {
	const ceilingMiB = 100
	p := startPeer(t)
	// One line over the limit.
	c, err := net.Dial("unix", strings.TrimPrefix(p.ctl, "unix:"))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = c.Write(append(bytes.Repeat([]byte("A"), control.MaxLine+100), '\n')) }()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadBytes('\n')
	c.Close()
	var resp control.Response
	if err != nil || json.Unmarshal(line, &resp) != nil || resp.Error == nil || resp.Error.Code != control.CodeBadRequest ||
		!strings.Contains(resp.Error.Message, "longer than") {
		t.Errorf("a line over MaxLine: %v %q", err, line)
	}
	// Many connections, each holding a partial line of almost MaxLine.
	const conns = 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := 0
	hold := make(chan struct{})
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("unix", strings.TrimPrefix(p.ctl, "unix:"))
			if err != nil {
				return
			}
			defer c.Close()
			got := make(chan []byte, 1)
			go func() {
				_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
				l, _ := bufio.NewReader(c).ReadBytes('\n')
				got <- l
			}()
			_, _ = c.Write(bytes.Repeat([]byte("B"), control.MaxLine-1024))
			select {
			case l := <-got:
				var r control.Response
				if json.Unmarshal(l, &r) == nil && r.Error != nil && r.Error.Code == control.CodeResourceExhausted {
					mu.Lock()
					refused++
					mu.Unlock()
				}
			case <-hold:
			}
		}()
	}
	// Every connection over the limit is refused once it is accepted; the
	// wait ends on that count, not on a fixed time, which a loaded machine
	// overruns.
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := refused
		mu.Unlock()
		if n >= conns-control.MaxConns {
			break
		}
	}
	if _, err := p.hello(t); err == nil {
		t.Error("a hello was served with every slot taken")
	}
	close(hold)
	wg.Wait()
	if refused < conns-control.MaxConns {
		t.Errorf("%d of %d connections refused with resource_exhausted, want at least %d", refused, conns, conns-control.MaxConns)
	}
	var h *control.HelloResult
	for i := 0; i < 50; i++ {
		if h, err = p.hello(t); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || len(h.Ports) == 0 {
		t.Errorf("hello after the flood: %v", err)
	}
	code, rss := p.stop(t)
	t.Logf("%d connections, %d refused; peak RSS %.0f MiB (ceiling %d)", conns, refused, rss, ceilingMiB)
	if code != 0 {
		t.Errorf("exit status %d: %s", code, p.stderr.String())
	}
	if (rss < 0 && runtime.GOOS == "linux") || rss > ceilingMiB {
		t.Errorf("peak RSS %.0f MiB over the %d MiB ceiling (or not measured)", rss, ceilingMiB)
	}
}

// hostileFrames returns n seeded tunnel datagrams for plane 0 or 1:
// random bytes, well-formed writes from random sources to random QPs,
// the same with a byte flipped, and oversized datagrams.
func hostileFrames(seed uint64, n int) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 6))
	shim := func(plane int, f []byte) []byte {
		return append([]byte{'M', 'R', 'C', 'T', 1, 0, byte(plane), 0}, f...)
	}
	out := make([][]byte, 0, n)
	for i := 0; i < n; i++ {
		var f []byte
		switch i % 4 {
		case 0:
			f = make([]byte, rng.IntN(2000))
			for j := range f {
				f[j] = byte(rng.Uint32())
			}
		case 1, 2:
			p := wire.Packet{}
			p.Eth.Src, p.Eth.Dst = [6]byte{2, byte(rng.Uint32()), 0, 0, 0, 1}, [6]byte{2, 0x4d, 0x52, 0x50, 0, 0x10}
			p.IP4.TTL, p.IP4.FlagsFrag = 64, 0x4000
			p.IP4.Src, p.IP4.Dst = [4]byte{10, byte(rng.Uint32()), byte(rng.Uint32()), 9}, [4]byte{10, 0, 0, 2}
			p.SetEV(rng.Uint32(), wire.EVModeSTEV)
			p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: rng.Uint32() & 0xFFFFFF, PSN: rng.Uint32() & 0xFFFFFF}
			p.RETH = wire.RETH{VA: rng.Uint64(), RKey: rng.Uint32(), DMALength: 64}
			p.Payload = make([]byte, 64)
			f, _ = wire.Default.Append(nil, &p)
			if i%4 == 2 && len(f) > 0 {
				f[rng.IntN(len(f))] ^= byte(1 + rng.IntN(255))
			}
		case 3:
			f = make([]byte, 60000)
		}
		out = append(out, shim(rng.IntN(2), f))
	}
	return out
}

// TestPeerRandomFrames (issue 14): mrc-peer takes a seeded spray of
// random, well-formed and corrupted frames and oversized datagrams
// without failing or growing, and then passes a conformance run against
// a tester whose hello announces it.
func TestPeerRandomFrames(t *testing.T) {
	const ceilingMiB = 100
	const seed = 14
	const sprayFor = time.Second
	p := startPeer(t)
	frames := hostileFrames(seed, 2000)
	s, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start, sent := time.Now(), 0
	for time.Since(start) < sprayFor {
		for _, f := range frames {
			if _, err := s.WriteToUDP(f, p.tunnel); err == nil {
				sent++
			}
		}
	}
	// A conformance run, as mrc-conform run --transport udp makes it.
	macs := [][6]byte{{2, 0x4d, 0x52, 0x54, 0, 0x20}, {2, 0x4d, 0x52, 0x54, 0, 0x21}}
	tun, err := netio.ListenTunnel("127.0.0.1:0", p.tunnel.String(), macs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctl, err := active.DialControl(ctx, p.ctl)
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := active.NewSocketTarget(active.SocketConfig{Name: "udp", Conn: tun, Control: ctl,
		TesterIP: netip.MustParseAddr("10.0.0.1"), Ports: spec.DefaultProfile().AcceptUDPDstPorts, Tunnel: tun.LocalAddr().String()})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := active.Run(ctx, tgt, active.Options{Seed: seed, Cases: "MRC-RSP-RCV-101,MRC-CMP-SND-101"})
	tgt.Close()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Result != "PASS" {
		for _, r := range rep.Results {
			t.Logf("%s %s: %s", r.Case.ID, r.Verdict, r.Reason)
		}
		t.Errorf("run after the spray: %s", rep.Summary.Result)
	}
	code, rss := p.stop(t)
	t.Logf("seed %d: %d hostile datagrams in 1 s; peak RSS %.0f MiB (ceiling %d)", seed, sent, rss, ceilingMiB)
	if code != 0 {
		t.Errorf("exit status %d: %s", code, p.stderr.String())
	}
	if (rss < 0 && runtime.GOOS == "linux") || rss > ceilingMiB {
		t.Errorf("peak RSS %.0f MiB over the %d MiB ceiling (or not measured)", rss, ceilingMiB)
	}
}

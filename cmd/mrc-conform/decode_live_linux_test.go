//go:build linux

package main

import (
	"bytes"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openmrc/mrc/internal/testenv"
	"github.com/openmrc/mrc/netio"
	"github.com/openmrc/mrc/pcap"
)

// signalWriter collects what is written and closes ready when the text
// so far contains want.
type signalWriter struct {
	mu    sync.Mutex
	b     bytes.Buffer
	want  string
	ready chan struct{}
	once  sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if strings.Contains(w.b.String(), w.want) {
		w.once.Do(func() { close(w.ready) })
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// liveDecode runs decode with args inside namespace ns, calls send once
// it says "Capturing on", and returns its stdout, stderr and status.
func liveDecode(t *testing.T, ns string, send func(), args ...string) (string, string, int) {
	t.Helper()
	var out bytes.Buffer
	errw := &signalWriter{want: "Capturing on", ready: make(chan struct{})}
	done := make(chan int, 1)
	go func() {
		_ = testenv.InNetns(ns, func() error {
			done <- dispatch(append([]string{"decode"}, args...), &out, errw)
			return nil
		})
	}()
	select {
	case <-errw.ready:
		send()
	case code := <-done:
		t.Fatalf("decode %v ended (status %d) before capturing: %s", args, code, errw.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("decode %v did not start capturing in 10 s", args)
	}
	select {
	case code := <-done:
		return out.String(), errw.String(), code
	case <-time.After(20 * time.Second):
		t.Fatalf("decode %v did not stop in 20 s", args)
	}
	return "", "", -1
}

// TestDecodeLive sends the corpus's valid frames over two veth pairs
// between network namespaces (frame i on plane i mod 2) and decodes them
// live on the other side with -i: every frame is printed as the file
// decode prints it, on the right interface; -c stops the capture; -Y
// filters it; -a duration ends a capture that sees nothing.
func TestDecodeLive(t *testing.T) {
	n := testenv.NewNetnsPair(t, 2)
	rd, err := pcap.Open(testdata + "valid.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	var frames [][]byte
	for {
		var f pcap.Frame
		if err := rd.Next(&f); err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
		frames = append(frames, slices.Clone(f.Data))
	}
	rd.Close()
	var tx *netio.AFPacket
	if err := testenv.InNetns(n.NsA, func() (err error) {
		tx, err = netio.OpenAFPacket(n.IfA, []uint16{4791}, false)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	send := func() {
		for i, f := range frames {
			if err := tx.WriteFrame(i%2, f); err != nil {
				t.Error(err)
			}
		}
	}
	iface := strings.Join(n.IfB, ",")
	golden := strings.Split(strings.TrimRight(golden(t, "valid.txt"), "\n"), "\n")
	if len(golden) != len(frames) {
		t.Fatalf("valid.txt has %d lines for %d frames", len(golden), len(frames))
	}

	start := time.Now()
	out, errOut, status := liveDecode(t, n.NsB, send, "-i", iface, "-c", "32", "-a", "duration:15")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if status != 0 || len(lines) != len(frames) {
		t.Fatalf("decode -i: status %d, %d lines for %d frames sent; stderr %q", status, len(lines), len(frames), errOut)
	}
	if want := "Capturing on '" + n.IfB[0] + "' and '" + n.IfB[1] + "'\n32 packets captured\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	// Each interface has its own socket, so the planes interleave as the
	// readers run; within a plane the frames keep their order. Numbers
	// count frames in arrival order; time and interface columns differ
	// from the file's.
	var got, want [2][]string
	for i, l := range lines {
		f := strings.Fields(l)
		pl := slices.Index(n.IfB, f[2])
		if f[0] != strconv.Itoa(i+1) || pl < 0 || len(l) < 31 || strings.HasPrefix(f[1], "-") {
			t.Fatalf("line %d: %q", i+1, l)
		}
		got[pl] = append(got[pl], l[31:])
	}
	for i, l := range golden {
		want[i%2] = append(want[i%2], l[31:])
	}
	for pl := range got {
		if !slices.Equal(got[pl], want[pl]) {
			t.Errorf("plane %d (%s): live\n%s\nfrom the file\n%s", pl, n.IfB[pl], strings.Join(got[pl], "\n"), strings.Join(want[pl], "\n"))
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("-c 32 took %v: the count did not stop the capture", d)
	}

	out, _, status = liveDecode(t, n.NsB, send, "-i", iface, "-c", "32", "-Y", "mrc.bth.opcode == RELIABILITY_NACK", "-a", "duration:15")
	if got := len(strings.Split(strings.TrimSpace(out), "\n")); status != 0 || got != 7 || !strings.Contains(out, "RELIABILITY_NACK") {
		t.Errorf("decode -i -Y NACKs: status %d, %d lines, want the 7 NACKs:\n%s", status, got, out)
	}

	start = time.Now()
	out, errOut, status = liveDecode(t, n.NsB, func() {}, "-i", n.IfB[0], "-a", "duration:0.5")
	if d := time.Since(start); status != 0 || out != "" || !strings.HasSuffix(errOut, "0 packets captured\n") || d > 5*time.Second {
		t.Errorf("-a duration:0.5 with no traffic: status %d after %v, stdout %q, stderr %q", status, d, out, errOut)
	}
}

// TestDecodeLiveUsage checks the live flags' usage errors, which need no
// root: no file with -i, -a only with -i, a bad -a.
func TestDecodeLiveUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-i", "eth0", testdata + "valid.pcapng"}, "give no capture file"},
		{[]string{"-a", "duration:1", testdata + "valid.pcapng"}, "use it with -i"},
		{[]string{"-i", "eth0", "-a", "hours:1"}, "want duration:SEC or packets:N"},
		{[]string{"-i", "eth0", "-a", "duration:-1"}, "more than 0"},
	} {
		out, errOut, status := run(t, append([]string{"decode"}, tc.args...)...)
		if status != 2 || out != "" || !strings.Contains(strings.SplitN(errOut, "\n", 2)[0], tc.msg) {
			t.Errorf("decode %v: status %d, stdout %q, stderr %q; want 2 and %q", tc.args, status, out, errOut, tc.msg)
		}
	}
}

// TestReportDropped: the end of a live capture names each interface whose
// socket lost frames, with the kernel's count, and says nothing of the
// others. Fails when a zero count is printed or counts go to the wrong
// interface.
func TestReportDropped(t *testing.T) {
	var b strings.Builder
	reportDropped(&b, []string{"eth1", "eth2", "eth3"}, []uint64{0, 17, 2})
	if want := "17 packets dropped from 'eth2'\n2 packets dropped from 'eth3'\n"; b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
	b.Reset()
	reportDropped(&b, []string{"eth1"}, []uint64{0})
	if b.String() != "" {
		t.Errorf("no drops: %q", b.String())
	}
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// judgeProgressRuns are judge runs whose progress TestJudgeProgressOnTerminal
// expects on a terminal: one capture long enough for a progress call
// (conformance.ProgressEvery frames), judged by one worker and by two, and
// two captures.
func judgeProgressRuns(t *testing.T) []struct {
	name string
	args []string
	want []string
} {
	long := longCapture(t, conformance.ProgressEvery+100)
	frames := fmt.Sprintf("\rjudging: %d frames", conformance.ProgressEvery)
	two := []string{testdata + "valid.pcapng", testdata + "scenarios/loss.pcapng"}
	return []struct {
		name string
		args []string
		want []string
	}{
		{"one capture, one worker", []string{"judge", "--pics", "default", "--jobs", "1", long}, []string{frames}},
		{"one capture, two workers", []string{"judge", "--pics", "default", "--jobs", "2", long}, []string{frames}},
		{"two captures", append([]string{"judge", "--pics", "default", "--jobs", "2"}, two...),
			[]string{"\rjudged 1 of 2 captures", "\rjudged 2 of 2 captures"}},
	}
}

// TestJudgeProgressOnTerminal: with standard error on a terminal (a
// pseudo-terminal, detected as the command detects one), judge shows how
// many frames it has judged, or how many captures of several, and clears
// the line before the report, which goes to standard output alone.
func TestJudgeProgressOnTerminal(t *testing.T) {
	for _, c := range judgeProgressRuns(t) {
		ptmx, pts := openPTY(t)
		var out bytes.Buffer
		code := -1
		tty := terminalOutput(t, ptmx, pts, func() { code = dispatch(c.args, &out, pts) })
		if !strings.Contains(out.String(), "RESULT ") {
			t.Fatalf("%s: exit %d, no report\n%s", c.name, code, tty)
		}
		for _, w := range c.want {
			if !strings.Contains(tty, w) {
				t.Errorf("%s: the terminal lacks %q: %q", c.name, w, tty)
			}
		}
		if !strings.HasSuffix(tty, "\r\033[K") {
			t.Errorf("%s: the progress line is not cleared: %q", c.name, tty)
		}
		if strings.Contains(out.String(), "\r") || !strings.Contains(out.String(), "RESULT ") {
			t.Errorf("%s: standard output is not the report alone:\n%s", c.name, out.String())
		}
	}
}

// TestJudgeQuietOffTerminal: with standard error a file (as in a script),
// the same runs print no progress there.
func TestJudgeQuietOffTerminal(t *testing.T) {
	for _, c := range judgeProgressRuns(t) {
		f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		code := dispatch(c.args, &out, f)
		f.Close()
		errs, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "RESULT ") || len(errs) != 0 {
			t.Errorf("%s: exit %d, standard error %q; want a report and no progress", c.name, code, errs)
		}
	}
}

// terminalOutput runs f and returns what it wrote to the terminal pts,
// read from ptmx as it is written.
func terminalOutput(t *testing.T, ptmx, pts *os.File, f func()) string {
	t.Helper()
	const end = "\x00end of test output\x00"
	got := make(chan string, 1)
	go func() {
		var b []byte
		buf := make([]byte, 4096)
		for !bytes.Contains(b, []byte(end)) {
			n, err := ptmx.Read(buf)
			b = append(b, buf[:n]...)
			if err != nil {
				break
			}
		}
		got <- string(b)
	}()
	f()
	if _, err := pts.WriteString(end); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		s, _, _ = strings.Cut(s, end)
		return s
	case <-time.After(time.Minute):
		ptmx.Close()
		t.Fatal("the terminal's output did not end")
	}
	return ""
}

// longCapture writes a capture of n writes of one connection, PSN 1 to n.
func longCapture(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "long.pcapng")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pcap.NewWriter(f, pcap.Interface{Name: "tx/plane0", LinkType: pcap.LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1_700_000_000, 0)
	p := &wire.Packet{IsIPv6: true}
	p.IP6 = wire.IPv6{TrafficClass: 4<<2 | 2, HopLimit: 64, Src: [16]byte{0xfd, 15: 1}, Dst: [16]byte{0xfd, 15: 2}}
	p.RETH = wire.RETH{VA: 0x1000, RKey: 0x1234, DMALength: 16}
	p.Payload = make([]byte, 16)
	p.SetEV(0x100, wire.EVModeSTEV)
	var b []byte
	for i := 1; i <= n; i++ {
		p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: 0x11, PSN: uint32(i) & 0xFFFFFF, AckReq: true}
		p.METH = wire.METH{MSN: uint16(i)}
		if b, err = wire.Default.Append(b[:0], p); err != nil {
			t.Fatal(err)
		}
		fr := pcap.Frame{Number: i, Timestamp: start.Add(time.Duration(i) * time.Microsecond), Data: b, Length: len(b)}
		if err := w.WriteFrame(&fr); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

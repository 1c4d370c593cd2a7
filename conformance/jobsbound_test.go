package conformance

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// TestJobsIdenticalAtBounds: a capture that reaches a bound over all
// connections (MaxFlows, MaxNodes, MaxPoints) gives the same report for
// any number of workers, although each shard keeps the state of its own
// node pairs: JudgeFile judges it again with one worker.
func TestJobsIdenticalAtBounds(t *testing.T) {
	for _, c := range []struct {
		name               string
		pairs, qps, ifaces int
	}{
		{"MaxFlows", 6, MaxFlows/5 + 1, 1}, // no node pair alone reaches MaxFlows
		{"MaxNodes", MaxNodes/2 + 20, 1, 1},
		{"MaxPoints", 8, 4, MaxPoints + 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := writeBoundCapture(t, c.pairs, c.qps, c.ifaces)
			var want []byte
			for _, jobs := range []int{1, 2, 3} {
				rep, err := JudgeFile(name, Options{PICS: referencePICS(t), Today: testDay, Jobs: jobs})
				if err != nil {
					t.Fatal(err)
				}
				got, err := rep.JSON()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(got, []byte("state bound reached")) && !bytes.Contains(got, []byte("capture points")) {
					t.Fatalf("%d workers: no bound reached: the test checks nothing", jobs)
				}
				if jobs == 1 {
					want = got
				} else if !bytes.Equal(got, want) {
					t.Errorf("%d workers: the report differs from one worker's:\n%s", jobs, firstDiff(want, got))
				}
			}
		})
	}
}

// writeBoundCapture writes a capture of one write from each of qps QPs of
// each of pairs node pairs, over ifaces interfaces (capture points), and
// returns its file name.
func writeBoundCapture(t *testing.T, pairs, qps, ifaces int) string {
	t.Helper()
	var ins []pcap.Interface
	for i := 0; i < ifaces; i++ {
		ins = append(ins, pcap.Interface{Name: fmt.Sprintf("point%d", i), LinkType: pcap.LinkTypeEthernet})
	}
	var b bytes.Buffer
	w, err := pcap.NewWriter(&b, ins...)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	for q := 0; q < qps; q++ {
		for pr := 0; pr < pairs; pr++ {
			p := wire.Packet{IsIPv6: true}
			p.IP6 = wire.IPv6{TrafficClass: 4<<2 | 2, HopLimit: 64,
				Src: [16]byte{0xfd, 13: 1, 14: byte(pr >> 8), 15: byte(pr)}, Dst: [16]byte{0xfd, 13: 2, 14: byte(pr >> 8), 15: byte(pr)}}
			p.BTH = wire.BTH{Opcode: wire.OpWriteOnly, PKey: 0xFFFF, DestQP: uint32(0x100 + q), AckReq: true}
			p.RETH = wire.RETH{DMALength: 4}
			p.Payload = []byte{1, 2, 3, 4}
			f, err := wire.Default.Append(nil, &p)
			if err != nil {
				t.Fatal(err)
			}
			n++
			if err := w.WriteFrame(&pcap.Frame{Interface: n % ifaces, Timestamp: start.Add(time.Duration(n) * time.Microsecond), Data: f}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "bound.pcapng")
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestJudgeNotesShardedBound: Judge, which reads its capture once and
// cannot judge it again, notes that a report of several workers that
// reached a bound over all connections may differ from one worker's.
func TestJudgeNotesShardedBound(t *testing.T) {
	name := writeBoundCapture(t, MaxNodes/2+20, 1, 1)
	for _, jobs := range []int{1, 2} {
		r, err := pcap.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Judge(r, name, Options{PICS: referencePICS(t), Today: testDay, Jobs: jobs})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		noted := false
		for _, n := range rep.Capture.Notes {
			noted = noted || strings.Contains(n, "may differ from one worker's")
		}
		if noted != (jobs > 1) {
			t.Errorf("%d workers: noted %v, want %v: %q", jobs, noted, jobs > 1, rep.Capture.Notes)
		}
	}
}

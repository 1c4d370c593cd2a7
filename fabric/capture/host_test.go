package capture_test

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/fabric/capture"
	"github.com/openmrc/mrc/pcap"
	sm "github.com/openmrc/mrc/statemachine"
)

// hostFrame is what a test reads back of a host capture's frame.
type hostFrame struct {
	iface    string
	src, dst netip.Addr
	at       int64
}

// hostRun runs three nodes, node 0 and node 1 writing to node 2 (node 0
// n packets on each of two planes, node 1 one on plane 0), with a host
// capture configured as cfg, and reads the capture back.
func hostRun(t *testing.T, cfg capture.HostConfig, n int) []hostFrame {
	t.Helper()
	var b bytes.Buffer
	s, err := fabric.New(fabric.Config{Nodes: 3, Planes: 2, PlaneAddresses: true, Frames: capture.NewHost(&b, cfg)})
	if err != nil {
		t.Fatal(err)
	}
	var ids [2]fabric.EndpointID
	for i := range ids {
		if ids[i], err = s.Attach(i, 0x10, 2, endpoint{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Attach(2, 0x10, 0, endpoint{}); err != nil {
		t.Fatal(err)
	}
	s.Input(ids[0], func(now sm.Time, out *sm.Output) {
		for k := 0; k < n; k++ {
			out.Packets = append(out.Packets, write(uint32(2*k), 0), write(uint32(2*k+1), 1))
		}
	})
	s.Input(ids[1], func(now sm.Time, out *sm.Output) { out.Packets = append(out.Packets, write(100, 0)) })
	s.Run(sm.Never)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := pcap.NewReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	var fs []hostFrame
	err = (&pcap.Decoder{}).Each(r, func(rec *pcap.Record) error {
		if rec.Err != nil {
			t.Errorf("frame %d: %v", rec.Number, rec.Err)
		}
		if len(rec.Comments) > 0 {
			t.Errorf("frame %d has comments %q: a capture tool writes none", rec.Number, rec.Comments)
		}
		p := &rec.Packet
		fs = append(fs, hostFrame{rec.Iface.Name, netip.AddrFrom4(p.IP4.Src), netip.AddrFrom4(p.IP4.Dst), rec.Timestamp.UnixNano()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestHost: a host capture holds only the captured node's frames, sent and
// received, on interfaces named by plane; with Run, frames are written in
// runs per interface, out of time order across interfaces but in order
// within each, and none is lost.
func TestHost(t *testing.T) {
	const n = 12 // packets per plane from node 0
	for _, c := range []struct {
		cfg    capture.HostConfig
		frames int
		names  [2]string
		back   bool // frames out of time order expected
	}{
		{capture.HostConfig{Node: 0}, 2 * n, [2]string{"eth1", "eth2"}, false}, // node 0's tx, not node 1's
		{capture.HostConfig{Node: 2}, 2*n + 1, [2]string{"eth1", "eth2"}, false},
		{capture.HostConfig{Node: 2, Run: 5, Names: []string{"ens1f0", "ens1f1"}}, 2*n + 1, [2]string{"ens1f0", "ens1f1"}, true},
	} {
		fs := hostRun(t, c.cfg, n)
		if len(fs) != c.frames {
			t.Fatalf("%+v: %d frames, want %d", c.cfg, len(fs), c.frames)
		}
		back, last := 0, map[string]int64{}
		for i, f := range fs {
			plane := -1
			for p, nm := range c.names {
				if f.iface == nm {
					plane = p
				}
			}
			if plane < 0 {
				t.Fatalf("%+v: frame %d on %q, want %v", c.cfg, i+1, f.iface, c.names)
			}
			if mine := fabric.PlaneAddr(c.cfg.Node, plane, false); f.src != mine && f.dst != mine {
				t.Errorf("%+v: frame %d on %s, %v → %v: not node %d's plane %d address", c.cfg, i+1, f.iface, f.src, f.dst, c.cfg.Node, plane)
			}
			if f.at < last[f.iface] {
				t.Errorf("%+v: frame %d on %s is earlier than the previous frame on it", c.cfg, i+1, f.iface)
			}
			last[f.iface] = f.at
			if i > 0 && f.at < fs[i-1].at {
				back++
			}
		}
		if (back > 0) != c.back {
			t.Errorf("%+v: %d frames earlier than the frame before them", c.cfg, back)
		}
	}
}

// TestHostConfig: a host capture on a negative node, with the wrong
// number of names, repeated or empty names or an unbounded run is a typed
// error when the fabric opens it.
func TestHostConfig(t *testing.T) {
	for _, h := range []capture.HostConfig{{Node: -1}, {Names: []string{"a"}}, {Names: []string{"a", "a"}},
		{Names: []string{"a", ""}}, {Run: -1}, {Run: capture.MaxHostRun + 1}} {
		var ce *capture.HostConfigError
		if _, err := fabric.New(fabric.Config{Nodes: 2, Planes: 2, Frames: capture.NewHost(&bytes.Buffer{}, h)}); !errors.As(err, &ce) {
			t.Errorf("%+v: %v, want *HostConfigError", h, err)
		}
	}
}

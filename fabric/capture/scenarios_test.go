package capture

import (
	"bytes"
	"strings"
	"testing"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/pcap"
)

// TestScenarios runs every capture scenario, checks that its
// capture is well formed and shows the impairment on the wire, and that
// the same seed writes the same bytes (every capture is replayable).
func TestScenarios(t *testing.T) {
	const seed = 1
	for _, c := range Scenarios() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			var a, b bytes.Buffer
			if err := c.Write(seed, &a); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			e, err := c.Check(a.Bytes())
			if err != nil {
				t.Fatalf("seed %d: %v\nevidence: %+v", seed, err, e)
			}
			t.Logf("%s: %d frames, %d bytes: %+v", c.Name, e.Frames, a.Len(), *e)
			if err := c.Write(seed, &b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("seed %d: two runs wrote different captures", seed)
			}
		})
	}
}

// TestCaptureEvidenceCanFail shows that the evidence checks reject a
// capture without the impairment: the loss scenario's check on the
// duplicate scenario's capture (no retransmissions there) must fail, and
// so must every check on an empty capture.
func TestCaptureEvidenceCanFail(t *testing.T) {
	loss, _ := Lookup("loss")
	reverse, _ := Lookup("reverse-loss")
	var clean bytes.Buffer
	if err := reverse.Write(1, &clean); err != nil {
		t.Fatal(err)
	}
	if _, err := loss.Check(clean.Bytes()); err == nil {
		t.Error("the loss evidence accepted a capture with no data loss")
	}
	for _, c := range Scenarios() {
		if _, err := c.Check(nil); err == nil {
			t.Errorf("%s: accepted an empty capture", c.Name)
		}
	}
}

// TestPerPlaneCaptures: the per-plane scenarios put each plane's own
// addresses of the two nodes on the wire (fd00:P::1 and fd00:P::2, a
// different pair per plane), and one QP pair (0x101 and 0x201) carries
// the traffic of both planes. The dumpcap-style capture names its
// interfaces eth1 and eth2 and is out of time order across them. A
// capture written without per-plane addressing fails the check.
func TestPerPlaneCaptures(t *testing.T) {
	const seed = 1
	for _, name := range []string{"perplane-loss", "dumpcap-loss"} {
		c, ok := Lookup(name)
		if !ok {
			t.Fatalf("no capture scenario %s", name)
		}
		var b bytes.Buffer
		if err := c.Write(seed, &b); err != nil {
			t.Fatalf("%s seed %d: %v", name, seed, err)
		}
		e, err := c.Check(b.Bytes())
		if err != nil {
			t.Fatalf("%s seed %d: %v", name, seed, err)
		}
		want := map[PlaneSource]bool{}
		for pl := 0; pl < 2; pl++ {
			for n := 0; n < 2; n++ {
				want[PlaneSource{pl, fabric.PlaneAddr(n, pl, true)}] = true
			}
		}
		for pa, n := range e.PlaneAddrs {
			if !want[pa] || n == 0 {
				t.Errorf("%s: %d frames from %v on plane %d, not a node's address on that plane", name, n, pa.Addr, pa.Plane)
			}
		}
		if len(e.PlaneAddrs) != len(want) {
			t.Errorf("%s: sources by plane %v, want each node's address on each plane", name, e.PlaneAddrs)
		}
		if len(e.WriteQPs) != 1 || e.WriteQPs[0x201] == 0 || len(e.DestQPs) != 2 || e.DestQPs[0x101] == 0 {
			t.Errorf("%s: writes to %v, frames to %v: want one QP pair 0x101 → 0x201 on both planes", name, e.WriteQPs, e.DestQPs)
		}
		if e.PlaneData[0] == 0 || e.PlaneData[1] == 0 {
			t.Errorf("%s: data frames per plane %v", name, e.PlaneData)
		}
		if name == "dumpcap-loss" && e.OutOfOrder == 0 {
			t.Errorf("%s: frames in time order", name)
		}
		if name == "dumpcap-loss" {
			r, err := pcap.NewReader(bytes.NewReader(b.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if err := (&pcap.Decoder{}).Each(r, func(*pcap.Record) error { return nil }); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, in := range r.Interfaces() {
				names = append(names, in.Name)
				if in.Plane >= 0 {
					t.Errorf("%s: interface %q names its plane", name, in.Name)
				}
			}
			if len(names) != 2 || names[0] != "eth1" || names[1] != "eth2" {
				t.Errorf("%s: interfaces %v, want [eth1 eth2]", name, names)
			}
		}
		// The check sees a capture that lacks per-plane addresses.
		single := c
		single.Addressing.PlaneAddresses = false
		var s bytes.Buffer
		if err := single.Write(seed, &s); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Check(s.Bytes()); err == nil || !strings.Contains(err.Error(), "plane's addresses") {
			t.Errorf("%s: a capture with one address per node passed the per-plane check: %v", name, err)
		}
	}
}

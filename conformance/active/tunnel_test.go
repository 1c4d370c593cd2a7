package active

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/conformance/active/control"
	"github.com/openmrc/mrc/conformance/active/netio"
	"github.com/openmrc/mrc/conformance/active/peer"
	"github.com/openmrc/mrc/spec"
)

// tunnelTarget starts the reference peer on a UDP tunnel, as mrc-peer
// does, and a tester target on another tunnel endpoint.
func tunnelTarget(t *testing.T, faults ...string) *SocketTarget {
	t.Helper()
	macs := [][6]byte{{2, 0x4d, 0x52, 0x50, 0, 0x10}, {2, 0x4d, 0x52, 0x50, 0, 0x11}}
	pt, err := netio.ListenTunnel("127.0.0.1:0", "", macs)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := peer.ParseFaults(faults...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := peer.New(peer.Config{MACs: macs, IP: netip.MustParseAddr("10.0.0.2"), Seed: 1, Faults: fs})
	if err != nil {
		t.Fatal(err)
	}
	r := peer.NewRunner(a, pt)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	tt, err := netio.ListenTunnel("127.0.0.1:0", pt.LocalAddr().String(), [][6]byte{{2, 0, 0, 0, 1, 1}, {2, 0, 0, 0, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tt.Hello(); err != nil {
		t.Fatal(err)
	}
	tgt, err := NewSocketTarget(SocketConfig{Name: "udp", Conn: tt, Control: control.NewClient(control.Local{H: r.Handler()}),
		TesterIP: netip.MustParseAddr("10.0.0.1"), Ports: spec.DefaultProfile().AcceptUDPDstPorts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	return tgt
}

// TestUDPTunnel runs a cross-section of the suite in real time over the
// UDP tunnel against the reference peer: the socket paths, kernel
// timestamps and real-time tolerances, without privileges.
func TestUDPTunnel(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time run")
	}
	tgt := tunnelTarget(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := Run(ctx, tgt, Options{Seed: 5, Today: today,
		Cases: "MRC-RSP-RCV-101,MRC-RSP-DUP-101,MRC-RSP-NACK-101,MRC-LR-RTX-101,MRC-LR-NACK-101,MRC-EP-GEN-101,MRC-WIMM-RSP-101,MRC-WIRE-IUT-101"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Verdict != conformance.Pass {
			t.Errorf("%s: %s: %s", r.Case.ID, r.Verdict, r.Reason)
			for _, f := range r.Findings {
				t.Logf("    %s %s: expected %s; observed %s", f.Verdict, f.Requirement, f.Expected, f.Observed)
			}
		}
	}
}

// TestUDPTunnelCatchesFault: a seeded bug fails in real time as it does
// in synthetic time.
func TestUDPTunnelCatchesFault(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time run")
	}
	tgt := tunnelTarget(t, "ignore-trim")
	rep, err := Run(context.Background(), tgt, Options{Seed: 5, Today: today, Cases: "MRC-LR-NACK-101"})
	if err != nil {
		t.Fatal(err)
	}
	if v := rep.Verdict("MRC-LR-NACK-101"); v != conformance.Fail {
		t.Errorf("ignore-trim over UDP: %s, want FAIL", v)
	}
}

// TestGuardRefusesStrays: the tester refuses frames to anything but the
// IUT, and an IUT that announces an address outside the configured peers
// is refused as a whole.
func TestGuardRefusesStrays(t *testing.T) {
	tgt := tunnelTarget(t)
	if err := tgt.CheckPeer(netip.MustParseAddr("10.0.0.2")); err != nil { // adopts the IUT's address
		t.Fatal(err)
	}
	var re *netio.RefusedError
	if err := tgt.Send(0, mrcFrameTo(netip.MustParseAddr("10.0.0.99"))); !errors.As(err, &re) {
		t.Errorf("a frame to 10.0.0.99: %v, want a *netio.RefusedError", err)
	}
	if err := tgt.Send(0, mrcFrameTo(netip.MustParseAddr("10.0.0.2"))); err != nil {
		t.Errorf("a frame to the IUT: %v", err)
	}
	var ue *UsageError
	if err := tgt.CheckPeer(netip.MustParseAddr("10.0.0.7")); !errors.As(err, &ue) {
		t.Errorf("an IUT at an unconfigured address: %v", err)
	}
	if _, err := NewSocketTarget(SocketConfig{Name: "afpacket", Conn: nil, TesterIP: netip.MustParseAddr("10.0.0.1")}); !errors.As(err, &ue) {
		t.Errorf("AF_PACKET without peers: %v", err)
	}
}

// mrcFrameTo is a minimal IPv4 UDP frame to dst on port 4791.
func mrcFrameTo(dst netip.Addr) []byte {
	b := make([]byte, 14+20+8+16)
	b[12], b[13] = 0x08, 0x00
	ip := b[14:]
	ip[0], ip[9] = 0x45, 17
	d := dst.As4()
	copy(ip[16:20], d[:])
	ip[20+2], ip[20+3] = 0x12, 0xB7
	return b
}

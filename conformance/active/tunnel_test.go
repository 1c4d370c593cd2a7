package active

import (
	"bytes"
	"context"
	"errors"
	"github.com/openmrc/mrc/internal/testenv"
	"net/netip"
	"testing"
	"time"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/netio"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/peer"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// tunnelTarget starts the reference peer on a UDP tunnel, as mrc-peer
// does, and a tester target on another tunnel endpoint, over IPv4.
func tunnelTarget(t *testing.T, faults ...string) *SocketTarget {
	return tunnelTargetOn(t, false, faults...)
}

// tunnelTargetOn is tunnelTarget over IPv6 when v6: the tunnel on ::1, the
// MRC frames between fd00::1 and fd00::2. The tester knows an address of
// each version and takes the IUT's.
func tunnelTargetOn(t *testing.T, v6 bool, faults ...string) *SocketTarget {
	t.Helper()
	host, iut := "127.0.0.1", netip.MustParseAddr("10.0.0.2")
	if v6 {
		host, iut = "[::1]", netip.MustParseAddr("fd00::2")
	}
	macs := [][6]byte{{2, 0x4d, 0x52, 0x50, 0, 0x10}, {2, 0x4d, 0x52, 0x50, 0, 0x11}}
	pt, err := netio.ListenTunnel(host+":0", "", macs)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := peer.ParseFaults(faults...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := peer.New(peer.Config{MACs: macs, IP: iut, Seed: 1, Faults: fs})
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
	tt, err := netio.ListenTunnel(host+":0", pt.LocalAddr().String(), [][6]byte{{2, 0, 0, 0, 1, 1}, {2, 0, 0, 0, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tt.Hello(); err != nil {
		t.Fatal(err)
	}
	tgt, err := NewSocketTarget(SocketConfig{Name: "udp", Conn: tt, Control: control.NewClient(control.Local{H: r.Handler()}),
		TesterIP: netip.MustParseAddr("10.0.0.1"), TesterIPs: []netip.Addr{netip.MustParseAddr("fd00::1")},
		Ports: spec.DefaultProfile().AcceptUDPDstPorts})
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
		testenv.Unavailable(t, "a real-time run, left out by -short")
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

// TestUDPTunnelIPv6 runs cases over the UDP tunnel on IPv6 (the tunnel
// on ::1, IPv6 MRC frames), among them SRv6 decapsulation and a
// step-mode rotation case, in real time.
func TestUDPTunnelIPv6(t *testing.T) {
	if testing.Short() {
		testenv.Unavailable(t, "a real-time run, left out by -short")
	}
	tgt := tunnelTargetOn(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var capture bytes.Buffer
	rep, err := Run(ctx, tgt, Options{Seed: 5, Today: today, Capture: &capture,
		Cases: "MRC-RSP-RCV-101,MRC-LR-RTX-101,MRC-WIRE-ENC-101,MRC-WIRE-GEN-101,MRC-EV-ST-102,MRC-WIRE-IUT-101"})
	if err != nil {
		t.Fatal(err)
	}
	if ip := tgt.Local().IP; !ip.Is6() {
		t.Errorf("the tester used %v for an IPv6 IUT", ip)
	}
	for _, r := range rep.Results {
		if r.Verdict != conformance.Pass {
			t.Errorf("%s: %s: %s", r.Case.ID, r.Verdict, r.Reason)
			for _, f := range r.Findings {
				t.Logf("    %s %s: expected %s; observed %s", f.Verdict, f.Requirement, f.Expected, f.Observed)
			}
		}
	}
	// Every frame of the run is IPv6.
	rd, err := pcap.NewReader(bytes.NewReader(capture.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var f pcap.Frame
	n := 0
	for rd.Next(&f) == nil {
		var p wire.Packet
		if err := wire.Default.Decode(f.Data, &p); err != nil || !p.IsIPv6 {
			t.Fatalf("frame %d is not an IPv6 MRC frame (%v)", f.Number, err)
		}
		n++
	}
	if n == 0 {
		t.Error("no frame captured")
	}
}

// TestUDPTunnelCatchesFault: a seeded bug fails in real time as it does
// in synthetic time.
func TestUDPTunnelCatchesFault(t *testing.T) {
	if testing.Short() {
		testenv.Unavailable(t, "a real-time run, left out by -short")
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
	if _, err := NewSocketTarget(SocketConfig{Name: "udp", TesterIP: netip.MustParseAddr("10.0.0.1"),
		TesterIPs: []netip.Addr{netip.MustParseAddr("10.0.0.3")}}); !errors.As(err, &ue) {
		t.Errorf("two IPv4 tester addresses: %v", err)
	}
	// An IPv6 IUT: the tester takes its IPv6 address, and refuses IPv4
	// frames to the IUT's old address.
	if err := tgt.CheckPeer(netip.MustParseAddr("fd00::2")); !errors.As(err, &ue) || tgt.Local().IP != netip.MustParseAddr("10.0.0.1") {
		t.Errorf("an IUT at an unconfigured IPv6 address: %v; tester address %v", err, tgt.Local().IP)
	}
	v6 := tunnelTargetOn(t, true)
	if err := v6.CheckPeer(netip.MustParseAddr("fd00::2")); err != nil || v6.Local().IP != netip.MustParseAddr("fd00::1") {
		t.Errorf("an IPv6 IUT: %v; tester address %v, want fd00::1", err, v6.Local().IP)
	}
	if err := v6.Send(0, mrcFrameTo(netip.MustParseAddr("fd00::9"))); !errors.As(err, &re) {
		t.Errorf("an IPv6 frame to fd00::9: %v, want a *netio.RefusedError", err)
	}
}

// mrcFrameTo is a minimal IPv4 or IPv6 UDP frame to dst on port 4791.
func mrcFrameTo(dst netip.Addr) []byte {
	if dst.Is6() {
		b := make([]byte, 14+40+8+16)
		b[12], b[13] = 0x86, 0xDD
		ip := b[14:]
		ip[0], ip[6] = 0x60, 17
		d := dst.As16()
		copy(ip[24:40], d[:])
		ip[40+2], ip[40+3] = 0x12, 0xB7
		return b
	}
	b := make([]byte, 14+20+8+16)
	b[12], b[13] = 0x08, 0x00
	ip := b[14:]
	ip[0], ip[9] = 0x45, 17
	d := dst.As4()
	copy(ip[16:20], d[:])
	ip[20+2], ip[20+3] = 0x12, 0xB7
	return b
}

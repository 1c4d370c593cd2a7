package netio

import (
	"net"
	"testing"
	"time"
)

// shim returns a tunnel datagram carrying a frame of n bytes on plane 0.
func shim(n int) []byte {
	b := append(shimMagic[:4:4], shimVersion, shimFrame, 0, 0)
	return append(b, make([]byte, n)...)
}

// TestTunnelReadsOnlyItsRemote (issue 14, findings 1 and 2): a tunnel
// with a fixed remote reads only datagrams from that address and port;
// valid tunnel datagrams from any other socket are dropped and counted,
// and so is a frame over MaxFrame bytes, even from the remote.
func TestTunnelReadsOnlyItsRemote(t *testing.T) {
	macs := [][6]byte{{2, 0, 0, 0, 0, 1}}
	remote, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	stranger, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	tun, err := ListenTunnel("127.0.0.1:0", remote.LocalAddr().String(), macs)
	if err != nil {
		t.Fatal(err)
	}
	defer tun.Close()
	to := tun.LocalAddr()
	for i := 0; i < 5; i++ {
		if _, err := stranger.WriteToUDP(shim(100), to); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := remote.WriteToUDP(shim(MaxFrame+1), to); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.WriteToUDP(shim(60000), to); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.WriteToUDP(shim(MaxFrame), to); err != nil {
		t.Fatal(err)
	}
	got := make(chan Frame, 1)
	go func() {
		if f, err := tun.ReadFrame(); err == nil {
			got <- f
		}
	}()
	select {
	case f := <-got:
		if len(f.Data) != MaxFrame {
			t.Errorf("read a %d-byte frame; want the remote's %d-byte one", len(f.Data), MaxFrame)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the remote's frame was not read")
	}
	if d := tun.Drops(); d.Stranger != 5 || d.Oversized != 2 {
		t.Errorf("drops %+v, want 5 from a stranger and 2 oversized", d)
	}
	// SetRemote refuses what cannot be a peer.
	for _, bad := range []string{"127.0.0.1:0", "0.0.0.0:4000", "no-port"} {
		if err := tun.SetRemote(bad); err == nil {
			t.Errorf("SetRemote(%q) accepted", bad)
		}
	}
}

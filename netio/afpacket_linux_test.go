//go:build linux

package netio

import (
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/openmrc/mrc/internal/testenv"
)

// TestAFPacketReadBounds (issue 14): over a veth pair between two network
// namespaces with a 9,600-byte MTU, an AF_PACKET transport reads an MRC
// frame of MaxFrame bytes and drops a longer one and a non-MRC one; what
// it holds is bounded by MaxQueuedFrames frames of MaxFrame bytes. Root.
func TestAFPacketReadBounds(t *testing.T) {
	n := testenv.NewNetnsPair(t, 1)
	n.Run(t, n.IP, "-n", n.NsA, "link", "set", n.IfA[0], "mtu", "9600")
	n.Run(t, n.IP, "-n", n.NsB, "link", "set", n.IfB[0], "mtu", "9600")
	tx, rx := openPair(t, n)
	if cap(rx.frames) != MaxQueuedFrames {
		t.Errorf("queue of %d frames, want MaxQueuedFrames %d", cap(rx.frames), MaxQueuedFrames)
	}
	sized := func(port uint16, size int) []byte {
		f := frame(netip.MustParseAddr("10.0.0.2"), port, false, false)
		copy(f, rx.MACs()[0][:])
		return append(f, make([]byte, size-len(f))...)
	}
	got := make(chan int, 8)
	go func() {
		for {
			f, err := rx.ReadFrame()
			if err != nil {
				return
			}
			got <- len(f.Data)
		}
	}()
	for _, f := range [][]byte{sized(4791, MaxFrame+100), sized(53, 1000), sized(4791, MaxFrame)} {
		if err := tx.WriteFrame(0, f); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case n := <-got:
		if n != MaxFrame {
			t.Errorf("read a %d-byte frame first; want the %d-byte MRC frame (the longer one and the DNS one dropped)", n, MaxFrame)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the MaxFrame-byte frame was not read")
	}
	select {
	case n := <-got:
		t.Errorf("a further %d-byte frame read", n)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestAFPacketPending: Pending reports a frame that reached the socket
// before the reader took it, and still once ReadFrame returned it, until
// the caller calls ReadFrame again (it has applied the frame by then);
// then nothing. A transport that is not a tap asks the kernel not to queue
// its own transmissions (PACKET_IGNORE_OUTGOING, where the kernel has it).
// The peer's runner lets such frames in before it acts on an expired
// timer (LR-RTX-1): a SACK its reader goroutine holds, not yet applied,
// must stop the retransmission as one in the socket does. Root.
func TestAFPacketPending(t *testing.T) {
	n := testenv.NewNetnsPair(t, 1)
	tx, rx := openPair(t, n)
	if !settles(rx.Pending) {
		t.Fatal("pending before anything was sent, for 2 s")
	}
	f := frame(netip.MustParseAddr("10.0.0.2"), 4791, false, false)
	copy(f, rx.MACs()[0][:])
	if err := tx.WriteFrame(0, f); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !rx.Pending() {
		if time.Now().After(deadline) {
			t.Fatal("the frame sent never showed as pending")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := rx.ReadFrame(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if !rx.Pending() {
			t.Fatal("nothing pending while the caller holds the frame ReadFrame returned")
		}
		time.Sleep(10 * time.Millisecond)
	}
	next := make(chan error, 1)
	go func() { _, err := rx.ReadFrame(); next <- err }()
	for rx.Pending() {
		if time.Now().After(deadline) {
			t.Fatal("still pending once the caller asked for the next frame")
		}
		time.Sleep(time.Millisecond)
	}
	var v int
	var gerr error
	_ = tx.ifs[0].recv.Control(func(fd uintptr) {
		v, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_PACKET, packetIgnoreOutgoing)
	})
	if gerr == nil && v != 1 {
		t.Errorf("PACKET_IGNORE_OUTGOING %d on a transport that is not a tap, want 1", v)
	}
	rx.Close()
	if err := <-next; err == nil {
		t.Error("ReadFrame waiting on a closed transport returned a frame")
	}
}

// TestAFPacketPendingOn: PendingOn tells a plane's frames from another's,
// from the socket until the caller's next ReadFrame, as Pending does for
// all: the peer's runner holds an expired timer for the planes whose
// reader is behind its deadline only. Root.
func TestAFPacketPendingOn(t *testing.T) {
	n := testenv.NewNetnsPair(t, 2)
	tx, rx := openPair(t, n)
	if !settles(rx.Pending) {
		t.Fatal("pending before anything was sent, for 2 s")
	}
	if rx.PendingOn(-1) || rx.PendingOn(2) {
		t.Error("a plane the transport does not have is pending")
	}
	f := frame(netip.MustParseAddr("10.0.0.2"), 4791, false, false)
	copy(f, rx.MACs()[1][:])
	if err := tx.WriteFrame(1, f); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !rx.PendingOn(1) {
		if time.Now().After(deadline) {
			t.Fatal("the frame sent on plane 1 never showed as pending there")
		}
		time.Sleep(time.Millisecond)
	}
	plane0 := func() bool { return rx.PendingOn(0) }
	if !settles(plane0) {
		t.Error("plane 0 pending with a frame on plane 1 only")
	}
	got, err := rx.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	if got.Plane != 1 {
		t.Fatalf("read a frame of plane %d, want 1", got.Plane)
	}
	if !rx.PendingOn(1) {
		t.Error("plane 1 not pending while the caller holds its frame")
	}
	if !settles(plane0) {
		t.Error("plane 0 pending while the caller holds plane 1's frame")
	}
	next := make(chan error, 1)
	go func() { _, err := rx.ReadFrame(); next <- err }()
	for rx.PendingOn(1) {
		if time.Now().After(deadline) {
			t.Fatal("plane 1 still pending once the caller asked for the next frame")
		}
		time.Sleep(time.Millisecond)
	}
	if !settles(rx.Pending) {
		t.Error("pending with every frame released")
	}
	rx.Close()
	if err := <-next; err == nil {
		t.Error("ReadFrame waiting on a closed transport returned a frame")
	}
}

// settles reports whether pending turns false within 2 s: a reader's
// recvmsg shows as pending while it runs, even one that finds nothing
// (Pending), so "nothing pending" holds only once the readers are idle.
func settles(pending func() bool) bool {
	for deadline := time.Now().Add(2 * time.Second); pending(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// openPair opens an AF_PACKET transport for port 4791 on each side of n,
// tx in NsA and rx in NsB, closed when the test ends.
func openPair(t *testing.T, n *testenv.NetnsPair) (tx, rx *AFPacket) {
	t.Helper()
	if err := testenv.InNetns(n.NsA, func() (err error) { tx, err = OpenAFPacket(n.IfA, []uint16{4791}, false); return }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Close() })
	if err := testenv.InNetns(n.NsB, func() (err error) { rx, err = OpenAFPacket(n.IfB, []uint16{4791}, false); return }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rx.Close() })
	return tx, rx
}

// TestAFPacketDropped: a tap whose reader falls behind loses frames in
// the kernel, and Dropped counts them; its socket asked for
// RecvQueueBytes. Fails when Dropped reads no statistics (0 although the
// queue overflowed), forgets earlier reads (the kernel resets its count
// on each), or the queue keeps the kernel's default. Root.
func TestAFPacketDropped(t *testing.T) {
	n := testenv.NewNetnsPair(t, 1)
	tx, _ := openPair(t, n)
	var tap *AFPacket
	if err := testenv.InNetns(n.NsB, func() (err error) { tap, err = OpenAFPacket(n.IfB, []uint16{4791}, true); return }); err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	var q int
	_ = tap.ifs[0].recv.Control(func(fd uintptr) { q, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF) })
	if q < RecvQueueBytes {
		t.Errorf("the tap socket's receive queue is %d bytes, want at least RecvQueueBytes %d (root may force it)", q, RecvQueueBytes)
	}
	if d := tap.Dropped(); len(d) != 1 || d[0] != 0 {
		t.Fatalf("Dropped before anything was sent: %v, want [0]", d)
	}
	f := frame(netip.MustParseAddr("10.0.0.2"), 4791, false, false)
	copy(f, tap.MACs()[0][:])
	f = append(f, make([]byte, 1000)...)
	// Nothing calls the tap's ReadFrame: its reader stops at
	// MaxQueuedFrames and the kernel queue fills (about 2.3 KiB of it a
	// frame), then the kernel drops.
	send := func(k int) {
		for range k {
			if err := tx.WriteFrame(0, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	const frames = 12000
	send(frames)
	first := waitDropped(tap)
	if first == 0 || first >= frames {
		t.Fatalf("Dropped %d of %d frames sent to a tap nobody reads; want some, not all", first, frames)
	}
	send(2000)
	if second := waitDropped(tap); second != first+2000 {
		t.Errorf("Dropped %d after 2,000 more frames to the full tap, want %d + 2000", second, first)
	}
}

// waitDropped returns the tap's drop count once it stops changing.
func waitDropped(a *AFPacket) uint64 {
	last := a.Dropped()[0]
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		d := a.Dropped()[0]
		if d == last {
			return d
		}
		last = d
	}
	return last
}

package main

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"unsafe"
)

// TestIsTerminalPTY: the terminal end of a pseudo-terminal is a terminal.
func TestIsTerminalPTY(t *testing.T) {
	_, pts := openPTY(t)
	if !isTerminal(pts) {
		t.Errorf("isTerminal(%s) = false; want true", pts.Name())
	}
}

// openPTY opens a new pseudo-terminal: its controlling end ptmx, which
// reads what is written to its terminal end pts. Both close with the test.
func openPTY(t *testing.T) (ptmx, pts *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal on this Linux: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	var unlock int32
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlocking the pseudo-terminal: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("naming the pseudo-terminal: %v", e)
	}
	pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	return ptmx, pts
}

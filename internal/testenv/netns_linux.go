package testenv

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// NetnsPair is two network namespaces, A and B, joined by one veth pair
// per plane: IfA[i] in A faces IfB[i] in B. The interfaces are up and
// carry no IPv6 (nothing but the test's frames on the wire).
type NetnsPair struct {
	IP       string // path of the ip tool
	NsA, NsB string
	IfA, IfB []string
}

// NewNetnsPair creates the namespaces and veths, with names unique to
// this run, and removes them when the test ends, whatever happens. It
// needs root and ip; without them it skips (or fails under RequireEnv).
func NewNetnsPair(t testing.TB, planes int) *NetnsPair {
	t.Helper()
	Root(t)
	n := &NetnsPair{IP: LookPath(t, "ip")}
	id := fmt.Sprintf("%03d%04x", os.Getpid()%1000, rand.IntN(1<<16))
	n.NsA, n.NsB = "mrcA"+id, "mrcB"+id
	t.Cleanup(func() {
		for _, ns := range []string{n.NsA, n.NsB} {
			_ = exec.Command(n.IP, "netns", "del", ns).Run() // deleting a namespace deletes its veth ends
		}
	})
	n.Run(t, n.IP, "netns", "add", n.NsA)
	n.Run(t, n.IP, "netns", "add", n.NsB)
	for pl := 0; pl < planes; pl++ {
		a, b := fmt.Sprintf("mA%d%s", pl, id), fmt.Sprintf("mB%d%s", pl, id) // 10 characters, under IFNAMSIZ
		n.Run(t, n.IP, "link", "add", a, "type", "veth", "peer", "name", b)
		n.Run(t, n.IP, "link", "set", a, "netns", n.NsA)
		n.Run(t, n.IP, "link", "set", b, "netns", n.NsB)
		n.Run(t, n.IP, "-n", n.NsA, "link", "set", a, "up")
		n.Run(t, n.IP, "-n", n.NsB, "link", "set", b, "up")
		n.IfA, n.IfB = append(n.IfA, a), append(n.IfB, b)
	}
	for _, ns := range []string{n.NsA, n.NsB} {
		_ = exec.Command(n.IP, "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1").Run()
	}
	return n
}

// Run runs a command and fails the test with its output if it fails.
func (n *NetnsPair) Run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// InNetns runs f on a thread that has entered namespace ns. Sockets f
// opens stay in that namespace; the thread is discarded afterwards.
func InNetns(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		fd, err := syscall.Open("/run/netns/"+ns, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer syscall.Close(fd)
		nr, ok := map[string]uintptr{"amd64": 308, "arm64": 268, "riscv64": 268, "386": 346, "arm": 375, "ppc64le": 350, "s390x": 339}[runtime.GOARCH]
		if !ok {
			errc <- fmt.Errorf("setns: unknown system call number on %s", runtime.GOARCH)
			return
		}
		if _, _, e := syscall.RawSyscall(nr, uintptr(fd), syscall.CLONE_NEWNET, 0); e != 0 {
			errc <- fmt.Errorf("setns %s: %w", ns, e)
			return
		}
		errc <- f()
	}()
	return <-errc
}

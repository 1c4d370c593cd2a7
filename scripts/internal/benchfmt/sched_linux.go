package main

import (
	"syscall"
	"unsafe"
)

// The scheduling policies of sched_setscheduler(2).
const (
	schedOther = 0
	schedFIFO  = 1
)

// setScheduler sets the calling thread's scheduling policy and priority.
func setScheduler(policy, prio int) error {
	param := struct{ prio int32 }{int32(prio)}
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, 0, uintptr(policy), uintptr(unsafe.Pointer(&param)))
	if e != 0 {
		return e
	}
	return nil
}

// cpuSet is a CPU mask as sched_setaffinity(2) takes it (1,024 CPUs).
type cpuSet [16]uint64

// affinity gets (nr SYS_SCHED_GETAFFINITY) or sets (SYS_SCHED_SETAFFINITY)
// the calling thread's CPU mask.
func affinity(nr uintptr, s *cpuSet) error {
	if _, _, e := syscall.RawSyscall(nr, 0, unsafe.Sizeof(*s), uintptr(unsafe.Pointer(s))); e != 0 {
		return e
	}
	return nil
}

// pinner pins the calling thread, which must be locked to its goroutine,
// to one CPU of its mask at a time (the children it starts inherit the
// mask), and restores the mask.
type pinner struct {
	all  cpuSet
	cpus []int // the CPUs in all
}

// newPinner reads the calling thread's mask.
func newPinner() (*pinner, error) {
	p := &pinner{}
	if err := affinity(syscall.SYS_SCHED_GETAFFINITY, &p.all); err != nil {
		return nil, err
	}
	for c := 0; c < len(p.all)*64; c++ {
		if p.all[c/64]&(1<<(c%64)) != 0 {
			p.cpus = append(p.cpus, c)
		}
	}
	return p, nil
}

// pin pins the thread to CPU c.
func (p *pinner) pin(c int) error {
	var one cpuSet
	one[c/64] = 1 << (c % 64)
	return affinity(syscall.SYS_SCHED_SETAFFINITY, &one)
}

// restore gives the thread its mask back.
func (p *pinner) restore() error { return affinity(syscall.SYS_SCHED_SETAFFINITY, &p.all) }

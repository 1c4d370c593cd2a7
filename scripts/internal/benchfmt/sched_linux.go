package main

import (
	"runtime"
	"syscall"
	"time"
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

// coreSpeeds runs an arithmetic loop for d on each CPU this process may
// use, one CPU at a time, on a thread pinned to it, and returns each CPU
// and its speed in millions of loop steps per second.
func coreSpeeds(d time.Duration) (cpus []int, speeds []float64, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var all cpuSet
	if err := affinity(syscall.SYS_SCHED_GETAFFINITY, &all); err != nil {
		return nil, nil, err
	}
	defer affinity(syscall.SYS_SCHED_SETAFFINITY, &all)
	for c := 0; c < len(all)*64; c++ {
		if all[c/64]&(1<<(c%64)) == 0 {
			continue
		}
		var one cpuSet
		one[c/64] = 1 << (c % 64)
		if err := affinity(syscall.SYS_SCHED_SETAFFINITY, &one); err != nil {
			return nil, nil, err
		}
		cpus = append(cpus, c)
		speeds = append(speeds, spin(d))
	}
	return cpus, speeds, nil
}

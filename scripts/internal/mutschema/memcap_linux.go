package main

import (
	"syscall"
	"unsafe"
)

// capMemory limits the address space of process pid (RLIMIT_AS, soft and
// hard) to n bytes: past it the child's allocations fail, and a Go
// program stops with "fatal error: out of memory".
func capMemory(pid int, n uint64) error {
	lim := syscall.Rlimit{Cur: n, Max: n}
	_, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), syscall.RLIMIT_AS,
		uintptr(unsafe.Pointer(&lim)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

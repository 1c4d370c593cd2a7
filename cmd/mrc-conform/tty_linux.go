package main

import (
	"os"
	"syscall"
	"unsafe"
)

// isTTY reports whether f is a terminal: one that answers the terminal
// attributes request. Being a character device is not enough: /dev/null
// is one.
func isTTY(f *os.File) bool {
	c, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var t syscall.Termios
	var errno syscall.Errno
	if err := c.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	}); err != nil {
		return false
	}
	return errno == 0
}

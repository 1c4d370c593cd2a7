//go:build !linux

package main

import "os"

// isTTY reports whether f is a character device: a terminal, or a device
// such as /dev/null (Linux asks the device, tty_linux.go).
func isTTY(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

package testenv

import (
	"syscall"
	"time"
)

// CPUTime is the process's CPU time so far (user + system, every thread),
// which a loaded machine does not inflate as it does wall time; 0 where
// the system does not report it.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

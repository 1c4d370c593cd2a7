package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// timeCmd runs a command and writes one line to out: its wall time, user
// and system CPU time in seconds to the microsecond, and its peak RSS in
// KiB, from the kernel's accounting of the waited process (getrusage of
// the child). /usr/bin/time prints CPU time in steps of 10 ms, which is
// about 8 % of the judge's time on the loss capture. The command's output
// is discarded. It returns the command's exit status.
func timeCmd(out string, argv []string) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return 0, err
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, errors.New("no resource usage for the command")
	}
	line := fmt.Sprintf("%.6f %.6f %.6f %d\n", wall.Seconds(),
		time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds(), ru.Maxrss)
	if err := os.WriteFile(out, []byte(line), 0o644); err != nil {
		return 0, err
	}
	return cmd.ProcessState.ExitCode(), nil
}

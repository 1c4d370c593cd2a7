package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// timeCmd runs a command and writes one line to out: its wall time, user
// and system CPU time in seconds to the microsecond, and its peak RSS in
// KiB, from the kernel's accounting of the waited process (getrusage of
// the child). /usr/bin/time prints CPU time in steps of 10 ms, which is
// about 8 % of the judge's time on the loss capture. The command's output
// is discarded. It returns the command's exit status.
//
// With fifo > 0 the command runs under SCHED_FIFO at that priority (as
// under chrt -f), set on the thread that starts it, which the child
// inherits, and reset on that thread once it has started: the timed
// command is the command alone, without chrt's own start (about 5 ms of
// the 0.2-0.4 s judge runs here, in both runs of a ratio), and this
// process waits under its usual policy (a Go process waiting under
// SCHED_FIFO for a SCHED_FIFO child on two cores can starve it).
func timeCmd(out string, fifo int, argv []string) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	t0, err := start(cmd, fifo)
	if err != nil {
		return 0, err
	}
	err = cmd.Wait()
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

// start starts cmd, under SCHED_FIFO at priority fifo when fifo > 0, and
// returns when it started.
func start(cmd *exec.Cmd, fifo int) (time.Time, error) {
	if fifo <= 0 {
		t0 := time.Now()
		return t0, cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := setScheduler(schedFIFO, fifo); err != nil {
		return time.Time{}, fmt.Errorf("SCHED_FIFO priority %d: %w", fifo, err)
	}
	t0 := time.Now()
	err := cmd.Start()
	if rerr := setScheduler(schedOther, 0); rerr != nil {
		// The thread keeps SCHED_FIFO: it must not run other goroutines.
		runtime.LockOSThread()
		if err == nil {
			err = fmt.Errorf("resetting the scheduling policy: %w", rerr)
		}
	}
	return t0, err
}

// timeArgs parses benchfmt time's arguments: [-fifo PRIO] OUT CMD...
func timeArgs(args []string) (out string, fifo int, argv []string, err error) {
	if len(args) > 1 && args[0] == "-fifo" {
		if fifo, err = strconv.Atoi(args[1]); err != nil || fifo < 1 || fifo > 99 {
			return "", 0, nil, fmt.Errorf("-fifo %q: want a priority from 1 to 99", args[1])
		}
		args = args[2:]
	}
	if len(args) < 2 {
		return "", 0, nil, errors.New("usage: benchfmt time [-fifo PRIO] OUT CMD [ARG]")
	}
	return args[0], fifo, args[1:], nil
}

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// timeOpts are benchfmt time's options: the SCHED_FIFO priority the
// commands run at (0: the usual policy), and whether each command is
// pinned to a CPU of its own.
type timeOpts struct {
	fifo int
	pin  bool
}

// timeCmds runs commands at once and writes one line to out: the wall time
// until the last one exited, their user and system CPU time summed, in
// seconds to the microsecond, and the largest peak RSS in KiB, from the
// kernel's accounting of each waited process (getrusage of the child).
// /usr/bin/time prints CPU time in steps of 10 ms, which is about 8 % of
// the judge's time on the loss capture. The commands' output is
// discarded. It returns the first non-zero exit status of the commands in
// their order, or 0.
//
// With o.fifo > 0 the commands run under SCHED_FIFO at that priority (as
// under chrt -f), set on the thread that starts them, which the children
// inherit, and reset on that thread once they have started: what is timed
// is the commands alone, without chrt's own start (about 5 ms of the
// 0.2-0.4 s judge runs here, in both runs of a ratio), and this process
// waits under its usual policy (a Go process waiting under SCHED_FIFO for
// a SCHED_FIFO child on two cores can starve it). With o.pin the i-th
// command is pinned to the i-th CPU of this process's mask, so that each
// has a core of its own.
func timeCmds(out string, o timeOpts, argvs [][]string) (int, error) {
	cmds := make([]*exec.Cmd, len(argvs))
	for i, argv := range argvs {
		cmds[i] = exec.Command(argv[0], argv[1:]...)
	}
	t0, err := start(cmds, o)
	if err != nil {
		return 0, err
	}
	var user, sys time.Duration
	var rss int64
	code := 0
	for _, cmd := range cmds {
		var exit *exec.ExitError
		if err := cmd.Wait(); err != nil && !errors.As(err, &exit) {
			return 0, err
		}
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			return 0, errors.New("no resource usage for the command")
		}
		user += time.Duration(ru.Utime.Nano())
		sys += time.Duration(ru.Stime.Nano())
		rss = max(rss, ru.Maxrss)
		if code == 0 {
			code = cmd.ProcessState.ExitCode()
		}
	}
	wall := time.Since(t0)
	line := fmt.Sprintf("%.6f %.6f %.6f %d\n", wall.Seconds(), user.Seconds(), sys.Seconds(), rss)
	if err := os.WriteFile(out, []byte(line), 0o644); err != nil {
		return 0, err
	}
	return code, nil
}

// start starts cmds, under SCHED_FIFO at priority o.fifo when it is > 0
// and each on a CPU of its own with o.pin, and returns when they started.
// When one cannot start, those started are killed and waited for.
func start(cmds []*exec.Cmd, o timeOpts) (t0 time.Time, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var pn *pinner
	if o.pin {
		if pn, err = newPinner(); err != nil {
			return time.Time{}, fmt.Errorf("pinning: %w", err)
		}
		if len(pn.cpus) < len(cmds) {
			return time.Time{}, fmt.Errorf("pinning %d commands: %d CPUs", len(cmds), len(pn.cpus))
		}
	}
	if o.fifo > 0 {
		if err := setScheduler(schedFIFO, o.fifo); err != nil {
			return time.Time{}, fmt.Errorf("SCHED_FIFO priority %d: %w", o.fifo, err)
		}
	}
	t0 = time.Now()
	n := 0
	for ; n < len(cmds) && err == nil; n++ {
		if pn != nil {
			err = pn.pin(pn.cpus[n])
		}
		if err == nil {
			err = cmds[n].Start()
		}
	}
	if pn != nil {
		if rerr := pn.restore(); rerr != nil && err == nil {
			err = fmt.Errorf("restoring the CPU mask: %w", rerr)
		}
	}
	if o.fifo > 0 {
		if rerr := setScheduler(schedOther, 0); rerr != nil {
			// The thread keeps SCHED_FIFO: it must not run other goroutines.
			runtime.LockOSThread()
			if err == nil {
				err = fmt.Errorf("resetting the scheduling policy: %w", rerr)
			}
		}
	}
	if err != nil {
		for _, c := range cmds[:n] {
			if c.Process != nil {
				c.Process.Kill()
				c.Wait()
			}
		}
	}
	return t0, err
}

// cmdSep separates benchfmt time's commands.
const cmdSep = "::"

// timeArgs parses benchfmt time's arguments: [-fifo PRIO] [-pin] OUT
// CMD... [:: CMD...].
func timeArgs(args []string) (out string, o timeOpts, argvs [][]string, err error) {
	for len(args) > 0 {
		if len(args) > 1 && args[0] == "-fifo" {
			if o.fifo, err = strconv.Atoi(args[1]); err != nil || o.fifo < 1 || o.fifo > 99 {
				return "", o, nil, fmt.Errorf("-fifo %q: want a priority from 1 to 99", args[1])
			}
			args = args[2:]
		} else if args[0] == "-pin" {
			o.pin, args = true, args[1:]
		} else {
			break
		}
	}
	if len(args) < 2 {
		return "", o, nil, errors.New("usage: benchfmt time [-fifo PRIO] [-pin] OUT CMD [ARG] [:: CMD [ARG]]")
	}
	out, args = args[0], args[1:]
	for {
		i := slices.Index(args, cmdSep)
		if i < 0 {
			i = len(args)
		}
		if i == 0 {
			return "", o, nil, fmt.Errorf("an empty command before or after %q", cmdSep)
		}
		argvs = append(argvs, args[:i])
		if i == len(args) {
			return out, o, argvs, nil
		}
		args = args[i+1:]
	}
}

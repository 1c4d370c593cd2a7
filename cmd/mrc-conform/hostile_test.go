package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openmrc/mrc/control"
)

// The test executable doubles as mrc-conform: main is
// os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr)), and so is this,
// so tests see the real process's exit status, stdout and stderr, and
// its peak memory.
func init() {
	if os.Getenv("MRC_CONFORM_AS_MAIN") == "1" {
		os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
	}
}

// procResult is what one mrc-conform process did.
type procResult struct {
	stdout, stderr string
	code           int
	maxRSSMiB      float64
	took           time.Duration
}

// mrcConform runs mrc-conform as a process with args, killed after limit.
func mrcConform(t *testing.T, limit time.Duration, args ...string) procResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "MRC_CONFORM_AS_MAIN=1")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err := cmd.Run()
	r := procResult{stdout: o.String(), stderr: e.String(), took: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("mrc-conform %q did not end within %v\nstdout:\n%s\nstderr:\n%s", args, limit, r.stdout, r.stderr)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("mrc-conform %q: %v", args, err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSSMiB = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	return r
}

var resultLine = regexp.MustCompile(`(?m)^RESULT ([A-Z-]+) \(exit status (\d+)\)`)

// checkResultLine asserts that a text report's RESULT line names want and
// the status the process exited with.
func checkResultLine(t *testing.T, r procResult, want string) {
	t.Helper()
	m := resultLine.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Errorf("no RESULT line; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		return
	}
	if printed, _ := strconv.Atoi(m[2]); printed != r.code {
		t.Errorf("RESULT line says exit status %d, the process exited %d", printed, r.code)
	}
	if m[1] != want {
		t.Errorf("RESULT %s, want %s\n%s", m[1], want, r.stdout)
	}
}

// A fakeIUT is a hostile or broken control peer: hello succeeds (unless
// the behaviour says otherwise) with a 2-plane IPv4 IUT, and every other
// request gets what answer says.
type fakeIUT struct {
	addr string
	// answer returns the bytes to write for request n (1-based, hello
	// included), or nil to close the connection; stall makes it never
	// answer.
	answer func(n int, req control.Request) (reply []byte, stall bool)
	mu     sync.Mutex
	n      int
}

// helloReply is a well-formed hello answer for req.
func helloReply(req control.Request) []byte {
	h := control.HelloResult{Version: control.Version, Methods: control.Methods,
		Implementation: control.Implementation{Vendor: "hostile", Model: "fake IUT"},
		Ports:          []control.Port{{Port: 1, MAC: "02:4d:52:50:00:10", IP: "10.0.0.2"}, {Port: 2, MAC: "02:4d:52:50:00:11", IP: "10.0.0.2"}}}
	return reply(req.ID, h, nil)
}

func reply(id uint64, result any, e *control.Error) []byte {
	resp := control.Response{ID: id, Error: e}
	if e == nil {
		resp.Result, _ = json.Marshal(result)
	}
	b, _ := json.Marshal(resp)
	return append(b, '\n')
}

// startFakeIUT serves answer on a Unix socket until the test ends.
func startFakeIUT(t *testing.T, answer func(n int, req control.Request) ([]byte, bool)) *fakeIUT {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeIUT{addr: "unix:" + sock, answer: answer}
	done := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() {
		close(done)
		l.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				go func() { <-done; c.Close() }()
				f.serve(c, done)
			}()
		}
	}()
	return f
}

func (f *fakeIUT) serve(c net.Conn, done chan struct{}) {
	r := bufio.NewReaderSize(c, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var req control.Request
		_ = json.Unmarshal(line, &req)
		f.mu.Lock()
		f.n++
		n := f.n
		f.mu.Unlock()
		b, stall := f.answer(n, req)
		if stall {
			<-done
			return
		}
		if b == nil {
			return
		}
		if _, err := c.Write(b); err != nil {
			return
		}
	}
}

// deadPort returns a loopback UDP address nobody listens on.
func deadPort(t *testing.T) string {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := c.LocalAddr().String()
	c.Close()
	return a
}

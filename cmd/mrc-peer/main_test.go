package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/control"
)

// TestUsage: usage errors exit 2 with one line and a hint on standard
// error (no usage dump); -h and --version exit 0 on standard output.
func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args      []string
		want      int
		firstLine string // of stderr, or of stdout when want is 0
	}{
		{[]string{}, 2, "mrc-peer: --control is required"},
		{[]string{"--control", "unix:/tmp/x", "extra"}, 2, `mrc-peer: unexpected arguments ["extra"]`},
		{[]string{"--control", "unix:/tmp/x", "--fault", "gremlins"}, 2, "mrc-peer: "},
		{[]string{"--control", "unix:/tmp/x", "--ip", "ten"}, 2, `mrc-peer: --ip "ten"`},
		{[]string{"--control", "unix:/tmp/x", "--transport", "smoke-signals"}, 2, `mrc-peer: unknown transport "smoke-signals"`},
		{[]string{"--control", "unix:/tmp/x", "--transport", "afpacket"}, 2, "mrc-peer: --transport afpacket needs --iface"},
		{[]string{"--bogus"}, 2, "mrc-peer: flag provided but not defined: -bogus"},
		{[]string{"-h"}, 0, "usage: mrc-peer --control ADDR"},
		{[]string{"--help"}, 0, "usage: mrc-peer --control ADDR"},
		{[]string{"--version"}, 0, "mrc-peer "},
	} {
		var o, e bytes.Buffer
		got := run(context.Background(), c.args, &o, &e)
		out, other := e.String(), o.String()
		if c.want == 0 {
			out, other = other, out
		}
		if got != c.want || !strings.HasPrefix(out, c.firstLine) || other != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d and %q first", c.args, got, o.String(), e.String(), c.want, c.firstLine)
		}
		if c.want == 2 && (strings.Count(e.String(), "\n") != 2 || !strings.HasSuffix(e.String(), "\nsee 'mrc-peer -h'\n")) {
			t.Errorf("%q: stderr %q: want the error and the hint, two lines", c.args, e.String())
		}
	}
}

// TestServesControl: mrc-peer answers the control protocol on its socket
// and stops cleanly when told to.
func TestServesControl(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	ctx, cancel := context.WithCancel(context.Background())
	var errs bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--control", "unix:" + sock, "--listen", "127.0.0.1:0", "--fault", "bad-icrc", "--planes", "3"}, io.Discard, &errs)
	}()
	var c *control.Conn
	for i := 0; ; i++ {
		var err error
		if _, serr := os.Stat(sock); serr == nil {
			if c, err = control.Dial(ctx, "unix:"+sock); err == nil {
				break
			}
		}
		if i == 200 {
			t.Fatalf("mrc-peer did not start: %s", errs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cl := control.NewClient(c)
	h, err := cl.Hello(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Ports) != 3 || h.Implementation.Driver != "udp bad-icrc" {
		t.Errorf("hello: %+v", h)
	}
	cl.Close()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, errs.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("mrc-peer did not stop")
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openmrc/mrc/control"
)

func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{}, 2},
		{[]string{"--control", "unix:/tmp/x", "extra"}, 2},
		{[]string{"--control", "unix:/tmp/x", "--fault", "gremlins"}, 2},
		{[]string{"--control", "unix:/tmp/x", "--ip", "ten"}, 2},
		{[]string{"--control", "unix:/tmp/x", "--transport", "smoke-signals"}, 2},
		{[]string{"--control", "unix:/tmp/x", "--transport", "afpacket"}, 2},
		{[]string{"-h"}, 0},
	} {
		var errs bytes.Buffer
		if got := run(context.Background(), c.args, &errs); got != c.want {
			t.Errorf("%v: exit %d, want %d\n%s", c.args, got, c.want, errs.String())
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
		done <- run(ctx, []string{"--control", "unix:" + sock, "--listen", "127.0.0.1:0", "--fault", "bad-icrc", "--planes", "3"}, &errs)
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

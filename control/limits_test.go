package control

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestSilentConnectionsFreeTheirSlots (issue 14): MaxConns connections
// that send nothing, or half a request, hold the server's slots for
// MaxIdle at most; then a client is served again.
func TestSilentConnectionsFreeTheirSlots(t *testing.T) {
	defer func(d time.Duration) { maxIdle = d }(maxIdle)
	maxIdle = 300 * time.Millisecond
	addr := serve(t)
	for i := 0; i < MaxConns; i++ {
		c, err := net.Dial("unix", strings.TrimPrefix(addr, "unix:"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if i%2 == 1 {
			_, _ = c.Write([]byte(`{"id":1,"meth`)) // half a request, never finished
		}
	}
	hello := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c, err := Dial(ctx, addr)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = NewClient(c).Hello(ctx, "t")
		return err
	}
	time.Sleep(50 * time.Millisecond)
	if err := hello(); err == nil {
		t.Fatal("served with every slot held")
	}
	time.Sleep(maxIdle + 200*time.Millisecond)
	if err := hello(); err != nil {
		t.Errorf("not served after the silent connections timed out: %v", err)
	}
}

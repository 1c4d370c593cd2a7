package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

func echoHandler(method string, params json.RawMessage) (any, error) {
	switch method {
	case MethodHello:
		var p HelloParams
		if err := Decode(params, &p); err != nil {
			return nil, err
		}
		if p.Version != Version {
			return nil, Errorf(CodeVersion, "want %d", Version)
		}
		return HelloResult{Version: Version, Ports: []Port{{Port: 1, MAC: "02:00:00:00:00:01", IP: "10.0.0.2"}}}, nil
	case MethodPostSend:
		var p PostSendParams
		if err := Decode(params, &p); err != nil {
			return nil, err
		}
		if p.Opcode != OpRDMAWrite {
			return nil, Errorf(CodeInvalidArgument, "opcode %q", p.Opcode)
		}
		return Empty{}, nil
	case "panic":
		panic("boom")
	case "plain-error":
		return nil, errors.New("disk on fire")
	}
	return nil, Errorf(CodeUnknownMethod, "%q", method)
}

func serve(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, echoHandler) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "unix:" + sock
}

func TestClientServer(t *testing.T) {
	addr := serve(t)
	ctx := context.Background()
	conn, err := Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(conn)
	defer c.Close()
	h, err := c.Hello(ctx, "test")
	if err != nil || h.Ports[0].IP != "10.0.0.2" {
		t.Fatalf("hello: %v %+v", err, h)
	}
	if err := c.Call(ctx, MethodPostSend, PostSendParams{Opcode: OpRDMAWrite}, nil); err != nil {
		t.Error(err)
	}
	err = c.Call(ctx, MethodPostSend, PostSendParams{Opcode: OpSend}, nil)
	if !errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrUnsupported) {
		t.Errorf("refused opcode: %v", err)
	}
	if err := c.Call(ctx, "nope", nil, nil); !IsNotSupported(err) {
		t.Errorf("unknown method: %v", err)
	}
	if err := c.Call(ctx, "panic", nil, nil); !errors.Is(err, ErrInternal) {
		t.Errorf("panicking handler: %v", err)
	}
	if err := c.Call(ctx, "plain-error", nil, nil); !errors.Is(err, ErrInternal) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("plain error: %v", err)
	}
	if err := c.Call(ctx, MethodPostSend, map[string]any{"qpn": "not a number"}, nil); !errors.Is(err, ErrBadRequest) {
		t.Errorf("bad params: %v", err)
	}
}

// TestRawLines talks to the server as a vendor's client in another
// language would: raw JSON lines, including malformed ones.
func TestRawLines(t *testing.T) {
	network, a := SplitAddr(serve(t))
	c, err := net.Dial(network, a)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for _, x := range []struct{ in, want string }{
		{`{"id":1,"method":"hello","params":{"version":1}}`, `"result":{"version":1`},
		{`{"id":2,"method":"hello","params":{"version":2}}`, `"code":"version_mismatch"`},
		{`this is not json`, `"code":"bad_request"`},
		{`{"id":3}`, `"code":"bad_request"`},
		{`{"id":4,"method":"post_send","params":{"opcode":"RDMA_WRITE","future_field":true}}`, `{"id":4,"result":{}}`},
	} {
		if _, err := c.Write([]byte(x.in + "\n")); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(line, x.want) {
			t.Errorf("%s → %s, want %s", x.in, line, x.want)
		}
	}
}

func TestVersionMismatch(t *testing.T) {
	c := NewClient(Local{H: func(string, json.RawMessage) (any, error) { return HelloResult{Version: 2}, nil }})
	if _, err := c.Hello(context.Background(), "test"); !errors.Is(err, ErrVersion) {
		t.Errorf("hello against version 2: %v", err)
	}
}

func TestSplitAddr(t *testing.T) {
	for in, want := range map[string]string{"unix:/a/b": "unix /a/b", "tcp:h:1": "tcp h:1", "/tmp/x.sock": "unix /tmp/x.sock", "h:7000": "tcp h:7000"} {
		n, a := SplitAddr(in)
		if n+" "+a != want {
			t.Errorf("SplitAddr(%q) = %s %s", in, n, a)
		}
	}
}

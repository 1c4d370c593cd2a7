package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// RoundTripper carries one request to the IUT and returns its result, or
// the *Error the IUT answered, or a transport error.
type RoundTripper interface {
	RoundTrip(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// HandlerFunc is a server-side method dispatcher; it returns a result to
// encode, or an error (an *Error is sent as is; any other error is sent as
// internal).
type HandlerFunc func(method string, params json.RawMessage) (any, error)

// Local is a RoundTripper that calls a HandlerFunc in process, encoding
// and decoding JSON exactly as the socket protocol does.
type Local struct{ H HandlerFunc }

// RoundTrip implements RoundTripper.
func (l Local) RoundTrip(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	res, err := l.H(method, params)
	if err != nil {
		return nil, asError(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, Errorf(CodeInternal, "encoding the result: %v", err)
	}
	return b, nil
}

func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Errorf(CodeInternal, "%v", err)
}

// Client is the tester's side of the protocol.
type Client struct {
	rt RoundTripper
	// Timeout bounds each call; 0 means 10 s.
	Timeout time.Duration
}

// NewClient returns a client over rt.
func NewClient(rt RoundTripper) *Client { return &Client{rt: rt} }

// Call sends method with params and decodes the result into result
// (which may be nil).
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	if params == nil {
		params = Empty{}
	}
	pb, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("control: encoding %s params: %w", method, err)
	}
	to := c.Timeout
	if to == 0 {
		to = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	rb, err := c.rt.RoundTrip(ctx, method, pb)
	if err != nil {
		return err
	}
	if result == nil || len(rb) == 0 {
		return nil
	}
	if err := json.Unmarshal(rb, result); err != nil {
		return fmt.Errorf("control: decoding the %s result: %w", method, err)
	}
	return nil
}

// Close closes the transport when it is closable.
func (c *Client) Close() error {
	if cl, ok := c.rt.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// Hello opens the session and checks the protocol version.
func (c *Client) Hello(ctx context.Context, client string) (*HelloResult, error) {
	return c.HelloWith(ctx, HelloParams{Client: client})
}

// HelloWith opens the session with p (its Version is set to Version) and
// checks the protocol version.
func (c *Client) HelloWith(ctx context.Context, p HelloParams) (*HelloResult, error) {
	p.Version = Version
	var r HelloResult
	if err := c.Call(ctx, MethodHello, p, &r); err != nil {
		return nil, err
	}
	if r.Version != Version {
		return nil, Errorf(CodeVersion, "the IUT speaks protocol version %d, this tester %d", r.Version, Version)
	}
	return &r, nil
}

// Conn is a RoundTripper over a stream connection: one JSON line per
// request and per response. It is safe for concurrent use; calls are
// serialised.
type Conn struct {
	mu  sync.Mutex
	c   net.Conn
	r   *bufio.Reader
	id  uint64
	err error
}

// Dial connects to a control server. addr is "unix:PATH", "tcp:HOST:PORT",
// a path containing "/" (Unix) or "HOST:PORT" (TCP).
func Dial(ctx context.Context, addr string) (*Conn, error) {
	network, a := SplitAddr(addr)
	var d net.Dialer
	c, err := d.DialContext(ctx, network, a)
	if err != nil {
		return nil, err
	}
	return NewConn(c), nil
}

// SplitAddr returns the network ("unix" or "tcp") and address of a
// control address.
func SplitAddr(addr string) (network, a string) {
	switch {
	case strings.HasPrefix(addr, "unix:"):
		return "unix", strings.TrimPrefix(addr, "unix:")
	case strings.HasPrefix(addr, "tcp:"):
		return "tcp", strings.TrimPrefix(addr, "tcp:")
	case strings.Contains(addr, "/"):
		return "unix", addr
	}
	return "tcp", addr
}

// NewConn wraps an established connection.
func NewConn(c net.Conn) *Conn {
	return &Conn{c: c, r: bufio.NewReaderSize(c, 64<<10)}
}

// RoundTrip implements RoundTripper.
func (c *Conn) RoundTrip(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	c.id++
	req := Request{ID: c.id, Method: method, Params: params}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	b = append(b, '\n')
	if dl, ok := ctx.Deadline(); ok {
		_ = c.c.SetDeadline(dl)
	} else {
		_ = c.c.SetDeadline(time.Time{})
	}
	fail := func(err error) (json.RawMessage, error) {
		c.err = fmt.Errorf("control: connection broken during %s: %w", method, err)
		return nil, c.err
	}
	if _, err := c.c.Write(b); err != nil {
		return fail(err)
	}
	line, err := readLine(c.r)
	if err != nil {
		return fail(err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return fail(fmt.Errorf("bad response line: %v", err))
	}
	if resp.ID != req.ID {
		return fail(fmt.Errorf("response id %d to request %d", resp.ID, req.ID))
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// errLineTooLong is readLine's error for a line over MaxLine bytes.
var errLineTooLong = fmt.Errorf("line longer than %d bytes", MaxLine)

// readLine reads one line of at most MaxLine bytes, without its newline.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxLine+1 { // +1: the newline
			return nil, errLineTooLong
		}
		if err == nil {
			return line[:len(line)-1], nil
		}
		if err != bufio.ErrBufferFull {
			if err == io.EOF && len(line) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// Serve answers requests on every connection l accepts until ctx ends or
// l fails. Requests on one connection are handled one at a time, in order;
// h must be safe for concurrent use when several clients connect. At most
// MaxConns connections are served at once: a connection over the limit
// gets one resource_exhausted response (id 0) and is closed.
func Serve(ctx context.Context, l net.Listener, h HandlerFunc) error {
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, MaxConns)
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case slots <- struct{}{}:
		default:
			refuse(c, Errorf(CodeResourceExhausted, "too many control connections: this server serves %d at once", MaxConns))
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			ServeConn(ctx, c, h)
		}()
	}
}

// refuse writes one error response with id 0 and closes c, without
// waiting long for a client that does not read.
func refuse(c net.Conn, e *Error) {
	b, _ := json.Marshal(Response{Error: e})
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write(append(b, '\n'))
	c.Close()
}

// maxIdle is MaxIdle; tests shorten it.
var maxIdle = MaxIdle

// ServeConn answers the requests of one connection until it closes or
// stays silent for MaxIdle. A
// request line over MaxLine bytes is answered bad_request (id 0, as the
// request was not read) and the connection closed: the rest of the line
// cannot be told from a next request.
func ServeConn(ctx context.Context, c net.Conn, h HandlerFunc) {
	defer c.Close()
	go func() {
		<-ctx.Done()
		c.Close()
	}()
	r := bufio.NewReaderSize(c, 64<<10)
	w := bufio.NewWriter(c)
	for {
		// A connection holds one of MaxConns slots: one that sends no
		// request, or not the rest of one, within MaxIdle gives it back.
		_ = c.SetReadDeadline(time.Now().Add(maxIdle))
		line, err := readLine(r)
		if errors.Is(err, errLineTooLong) {
			refuse(c, Errorf(CodeBadRequest, "request line longer than %d bytes (MaxLine)", MaxLine))
			return
		}
		if err != nil {
			return
		}
		resp := handleLine(line, h)
		b, err := json.Marshal(resp)
		if err != nil {
			b, _ = json.Marshal(Response{ID: resp.ID, Error: Errorf(CodeInternal, "encoding the response: %v", err)})
		}
		b = append(b, '\n')
		if _, err := w.Write(b); err != nil {
			return
		}
		if err := w.Flush(); err != nil {
			return
		}
	}
}

func handleLine(line []byte, h HandlerFunc) (resp Response) {
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		return Response{Error: Errorf(CodeBadRequest, "not a JSON request: %v", err)}
	}
	resp.ID = req.ID
	if req.Method == "" {
		resp.Error = Errorf(CodeBadRequest, "missing method")
		return resp
	}
	if len(req.Params) == 0 {
		req.Params = json.RawMessage("{}")
	}
	defer func() {
		if v := recover(); v != nil {
			resp.Result, resp.Error = nil, Errorf(CodeInternal, "handler panic: %v", v)
		}
	}()
	res, err := h(req.Method, req.Params)
	if err != nil {
		resp.Error = asError(err)
		return resp
	}
	b, err := json.Marshal(res)
	if err != nil {
		resp.Error = Errorf(CodeInternal, "encoding the result: %v", err)
		return resp
	}
	resp.Result = b
	return resp
}

// Decode decodes params strictly enough for a server: a JSON object of the
// right shape (unknown fields are ignored, for forward compatibility).
func Decode(params json.RawMessage, v any) error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return Errorf(CodeBadRequest, "params: %v", err)
	}
	return nil
}

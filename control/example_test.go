package control_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openmrc/mrc/control"
)

// A server is a function from method and params to a result or an
// *Error; control.Serve puts it on a socket, control.Local calls it in
// process with the same JSON encoding.
func Example() {
	handler := func(method string, params json.RawMessage) (any, error) {
		switch method {
		case control.MethodHello:
			return control.HelloResult{Version: control.Version,
				Ports: []control.Port{{Port: 1, MAC: "02:00:00:00:00:01", IP: "10.0.0.2"}}}, nil
		case control.MethodCreateQP:
			return control.QPNResult{QPN: 0x100}, nil
		}
		return nil, control.Errorf(control.CodeUnknownMethod, "%q", method)
	}
	c := control.NewClient(control.Local{H: handler})
	ctx := context.Background()
	h, _ := c.Hello(ctx, "example")
	var q control.QPNResult
	_ = c.Call(ctx, control.MethodCreateQP, control.CreateQPParams{MaxSendWR: 64}, &q)
	err := c.Call(ctx, control.MethodSetPortStatus, control.SetPortStatusParams{Mask: 2}, nil)
	fmt.Println(h.Ports[0].IP, q.QPN, control.IsNotSupported(err))
	// Output: 10.0.0.2 256 true
}

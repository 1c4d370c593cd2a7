package control

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"testing"
)

// paramsOf gives each method's params type (ep_poll and reset take none).
var paramsOf = map[string]func() any{
	MethodHello: func() any { return new(HelloParams) }, MethodReset: func() any { return new(Empty) },
	MethodSetEVProfile: func() any { return new(EVProfile) }, MethodSetCCProfile: func() any { return new(CCProfile) },
	MethodRegMR: func() any { return new(RegMRParams) }, MethodWriteMR: func() any { return new(WriteMRParams) },
	MethodReadMR: func() any { return new(ReadMRParams) }, MethodCreateQP: func() any { return new(CreateQPParams) },
	MethodModifyQP: func() any { return new(ModifyQPParams) }, MethodQueryQP: func() any { return new(QPNParams) },
	MethodPostSend: func() any { return new(PostSendParams) }, MethodPostRecv: func() any { return new(PostRecvParams) },
	MethodPollCQ: func() any { return new(PollCQParams) }, MethodQueryCounters: func() any { return new(QueryCountersParams) },
	MethodSetPortStatus: func() any { return new(SetPortStatusParams) }, MethodModifyEVState: func() any { return new(ModifyEVStateParams) },
	MethodSetResourceCondition: func() any { return new(SetResourceConditionParams) },
	MethodEPSend:               func() any { return new(EPSendParams) }, MethodEPPoll: func() any { return new(Empty) },
	MethodModifyEVFmtProfile: func() any { return new(ModifyEVFmtProfileParams) },
	MethodModifyEVProfile:    func() any { return new(ModifyEVProfileParams) },
	MethodQueryEVProfile:     func() any { return new(IDParams) },
	MethodModifyCCProfile:    func() any { return new(ModifyCCProfileParams) },
	MethodQueryDeviceCtl:     func() any { return new(Empty) },
	MethodModifyPort:         func() any { return new(PortAdminParams) }, MethodQueryPort: func() any { return new(PortAdminParams) },
	MethodReqNotifyCQ: func() any { return new(ReqNotifyParams) }, MethodGetCQEvents: func() any { return new(CQEventsParams) },
	MethodGetAsyncEvents: func() any { return new(Empty) }, MethodQueryVersion: func() any { return new(Empty) },
	MethodEPBatchSend:   func() any { return new(EPBatchSendParams) },
	MethodEPBatchResult: func() any { return new(EPBatchResultParams) },
	MethodCreateQPHint:  func() any { return new(QPHint) }, MethodQueryQPHint: func() any { return new(QPHintParams) },
	MethodDestroyQPHint:  func() any { return new(QPHintParams) },
	MethodCreateContext:  func() any { return new(CreateContextParams) },
	MethodDestroyContext: func() any { return new(ContextParams) }, MethodQueryDeviceEx: func() any { return new(ContextParams) },
	MethodCreateCompChannel: func() any { return new(Empty) }, MethodDestroyCompChannel: func() any { return new(ChannelParams) },
	MethodGetCQEvent: func() any { return new(ChannelParams) },
}

// echo is a server handler that decodes each method's params into its
// type, as a server does, and answers with what it decoded.
func echo(method string, params json.RawMessage) (any, error) {
	mk, ok := paramsOf[method]
	if !ok {
		return nil, Errorf(CodeUnknownMethod, "%q", method)
	}
	v := mk()
	if err := Decode(params, v); err != nil {
		return nil, err
	}
	return v, nil
}

var codes = []Code{CodeBadRequest, CodeUnknownMethod, CodeUnsupported, CodeInvalidArgument, CodeInvalidState, CodeNotFound,
	CodeResourceExhausted, CodeVersion, CodeInternal}

// FuzzLine feeds the server's line reader and request handling an
// arbitrary byte stream. Every complete line gets exactly one response,
// which is one line of JSON that decodes back to itself, carries the
// request's id when the line is a request, and holds either a result or an
// error with one of the protocol's codes, never both. A line that is a
// request re-encodes to a request equal to it (round trip); params that
// decode into their method's type re-encode and decode to the same value
// (round trip), and the client side reads the result back from the
// response.
func FuzzLine(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"method":"hello","params":{"version":1}}`,
		`{"id":2,"method":"post_send","params":{"qpn":17,"opcode":"RDMA_WRITE","future_field":true}}`,
		`{"id":3,"method":"modify_qp","params":{"qpn":17,"state":"RTS","attr":{"path_mtu":1024}}}`,
		`{"id":4,"method":"write_mr","params":{"handle":1,"offset":0,"data":"AAEC"}}`,
		`{"id":5,"method":"set_ev_profile","params":{"id":7,"evs":[{"value":256,"port":1}]}}`,
		`{"id":6,"method":"ep_send","params":{}}` + "\n" + `{"id":7,"method":"nope"}`,
		"this is not json\n{\"id\":3}\n",
		`{"id":18446744073709551615,"method":"poll_cq","params":null}`,
	} {
		f.Add([]byte(s + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReaderSize(bytes.NewReader(data), 64<<10)
		n := 0
		for {
			line, err := readLine(r)
			if err != nil {
				if err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("line %d: %v", n, err)
				}
				break
			}
			n++
			checkLine(t, line)
		}
		if want := bytes.Count(data, []byte("\n")); n != want {
			t.Fatalf("%d lines answered, %d in the input", n, want)
		}
	})
}

func checkLine(t *testing.T, line []byte) {
	resp := handleLine(line, echo)
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatalf("response does not encode: %v", err)
	}
	if bytes.ContainsAny(b, "\n\r") {
		t.Fatalf("response is not one line: %q", b)
	}
	var back Response
	if err := json.Unmarshal(b, &back); err != nil || back.ID != resp.ID || (back.Error == nil) != (resp.Error == nil) {
		t.Fatalf("response %s does not decode to itself: %v", b, err)
	}
	if (resp.Error == nil) == (resp.Result == nil) {
		t.Fatalf("response %s has both or neither of result and error", b)
	}
	if resp.Error != nil && !slices.Contains(codes, resp.Error.Code) {
		t.Fatalf("error code %q is not one of the protocol's", resp.Error.Code)
	}
	var req Request
	if json.Unmarshal(line, &req) != nil {
		if resp.Error == nil || resp.Error.Code != CodeBadRequest {
			t.Fatalf("a line that is not a request got %s", b)
		}
		return
	}
	if resp.ID != req.ID {
		t.Fatalf("request id %d answered with id %d", req.ID, resp.ID)
	}
	rb, err := json.Marshal(req)
	if err != nil {
		t.Fatalf("request does not re-encode: %v", err)
	}
	var again Request
	if err := json.Unmarshal(rb, &again); err != nil || again.ID != req.ID || again.Method != req.Method ||
		!jsonEqual(again.Params, req.Params) {
		t.Fatalf("request %s re-encodes to %s: %v", line, rb, err)
	}
	mk, ok := paramsOf[req.Method]
	if resp.Error != nil || !ok {
		return
	}
	// The result echoes the params as the server decoded them: decoding it
	// on the client side gives the same value, and so does a second round.
	v1, v2 := mk(), mk()
	if err := Decode(resp.Result, v1); err != nil {
		t.Fatalf("%s: result %s does not decode: %v", req.Method, resp.Result, err)
	}
	b2, _ := json.Marshal(v1)
	if err := Decode(b2, v2); err != nil || !reflect.DeepEqual(v1, v2) {
		t.Fatalf("%s: params do not round-trip: %s then %s (%v)", req.Method, resp.Result, b2, err)
	}
}

// jsonEqual reports whether a and b are the same JSON value (or both
// absent); the encoder may escape characters the input did not.
func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	return da.Decode(&x) == nil && db.Decode(&y) == nil && reflect.DeepEqual(x, y)
}

// TestParamsOfEveryMethod keeps FuzzLine's table complete.
func TestParamsOfEveryMethod(t *testing.T) {
	for _, m := range Methods {
		if paramsOf[m] == nil {
			t.Errorf("method %s has no params type in paramsOf", m)
		}
	}
}

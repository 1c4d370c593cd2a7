package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Version is the protocol version this package speaks. Servers and clients
// with a different Version refuse each other at hello; new optional fields
// and methods do not change it (unknown fields are ignored, unknown methods
// answer unknown_method).
const Version = 1

// MaxLine bounds one protocol line (a request or response), in bytes.
// read_mr and write_mr move at most MaxData bytes, which fits.
const MaxLine = 1 << 22

// MaxConns bounds the connections Serve answers at once: with each
// holding at most a MaxLine request, a server's memory stays bounded
// however many clients connect.
const MaxConns = 4

// MaxIdle is how long Serve waits for a connection's next request (or
// the rest of one) before it closes the connection and frees its slot:
// clients that connect and send nothing cannot hold the slots for ever.
const MaxIdle = 2 * time.Minute

// MaxData bounds the data of one read_mr or write_mr.
const MaxData = 1 << 20

// Request is one line from the client.
type Request struct {
	ID     uint64          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Response is one line from the server: Result on success, Error
// otherwise.
type Response struct {
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Code classifies an error.
type Code string

// Error codes. A tester maps unsupported and unknown_method to the
// NOT-SUPPORTED verdict of the case that needed them, invalid_argument and
// invalid_state to a refusal the case may expect, and the others to a
// tester ERROR.
const (
	CodeBadRequest        Code = "bad_request"        // not JSON, or params of the wrong shape
	CodeUnknownMethod     Code = "unknown_method"     // the server does not implement the method
	CodeUnsupported       Code = "unsupported"        // the method exists but not this value or feature
	CodeInvalidArgument   Code = "invalid_argument"   // a value the IUT rejects (e.g. an attribute out of range)
	CodeInvalidState      Code = "invalid_state"      // not allowed in the object's current state
	CodeNotFound          Code = "not_found"          // unknown QP, MR or profile
	CodeResourceExhausted Code = "resource_exhausted" // a queue or table is full
	CodeVersion           Code = "version_mismatch"   // hello with another protocol version
	CodeInternal          Code = "internal"           // the server failed
)

// Error is a protocol error. It satisfies errors.Is against the Err*
// sentinels by code.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return "control: " + string(e.Code) + ": " + e.Message }

// Is matches an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Message == ""
}

// Sentinels for errors.Is.
var (
	ErrBadRequest        = &Error{Code: CodeBadRequest}
	ErrUnknownMethod     = &Error{Code: CodeUnknownMethod}
	ErrUnsupported       = &Error{Code: CodeUnsupported}
	ErrInvalidArgument   = &Error{Code: CodeInvalidArgument}
	ErrInvalidState      = &Error{Code: CodeInvalidState}
	ErrNotFound          = &Error{Code: CodeNotFound}
	ErrResourceExhausted = &Error{Code: CodeResourceExhausted}
	ErrVersion           = &Error{Code: CodeVersion}
	ErrInternal          = &Error{Code: CodeInternal}
)

// Errorf returns an *Error with code c.
func Errorf(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
}

// IsNotSupported reports whether err says the IUT lacks a method or
// feature (unknown_method or unsupported).
func IsNotSupported(err error) bool {
	return errors.Is(err, ErrUnsupported) || errors.Is(err, ErrUnknownMethod)
}

// Methods, in the order of control-protocol.md.
const (
	MethodHello                = "hello"
	MethodReset                = "reset"
	MethodSetEVProfile         = "set_ev_profile"
	MethodSetCCProfile         = "set_cc_profile"
	MethodRegMR                = "reg_mr"
	MethodWriteMR              = "write_mr"
	MethodReadMR               = "read_mr"
	MethodCreateQP             = "create_qp"
	MethodModifyQP             = "modify_qp"
	MethodQueryQP              = "query_qp"
	MethodPostSend             = "post_send"
	MethodPostRecv             = "post_recv"
	MethodPollCQ               = "poll_cq"
	MethodQueryCounters        = "query_counters"
	MethodSetPortStatus        = "set_port_status"
	MethodModifyEVState        = "modify_ev_state"
	MethodSetResourceCondition = "set_resource_condition"
	MethodEPSend               = "ep_send"
	MethodEPPoll               = "ep_poll"
	// The control API's objects (spec/36-api-objects.md).
	MethodModifyEVFmtProfile = "modify_ev_fmt_profile"
	MethodModifyEVProfile    = "modify_ev_profile"
	MethodQueryEVProfile     = "query_ev_profile"
	MethodModifyCCProfile    = "modify_cc_profile"
	MethodQueryDeviceCtl     = "query_device_ctl"
	MethodModifyPort         = "modify_port"
	MethodQueryPort          = "query_port"
	MethodReqNotifyCQ        = "req_notify_cq"
	MethodGetCQEvents        = "get_cq_events"
	MethodGetAsyncEvents     = "get_async_events"
	MethodQueryVersion       = "query_version"
	MethodEPBatchSend        = "ep_batch_send"
	MethodEPBatchResult      = "ep_batch_result"
	MethodCreateQPHint       = "create_qp_hint"
	MethodQueryQPHint        = "query_qp_hint"
	MethodDestroyQPHint      = "destroy_qp_hint"
	MethodCreateContext      = "create_context"
	MethodDestroyContext     = "destroy_context"
	MethodQueryDeviceEx      = "query_device_ex"
	MethodCreateCompChannel  = "create_comp_channel"
	MethodDestroyCompChannel = "destroy_comp_channel"
	MethodGetCQEvent         = "get_cq_event"
)

// Methods lists every method of this version.
var Methods = []string{
	MethodHello, MethodReset, MethodSetEVProfile, MethodSetCCProfile, MethodRegMR, MethodWriteMR,
	MethodReadMR, MethodCreateQP, MethodModifyQP, MethodQueryQP, MethodPostSend, MethodPostRecv,
	MethodPollCQ, MethodQueryCounters, MethodSetPortStatus, MethodModifyEVState,
	MethodSetResourceCondition, MethodEPSend, MethodEPPoll,
	MethodModifyEVFmtProfile, MethodModifyEVProfile, MethodQueryEVProfile, MethodModifyCCProfile,
	MethodQueryDeviceCtl, MethodModifyPort, MethodQueryPort,
	MethodReqNotifyCQ, MethodGetCQEvents, MethodGetAsyncEvents, MethodQueryVersion, MethodEPBatchSend, MethodEPBatchResult,
	MethodCreateQPHint, MethodQueryQPHint, MethodDestroyQPHint, MethodCreateContext, MethodDestroyContext, MethodQueryDeviceEx,
	MethodCreateCompChannel, MethodDestroyCompChannel, MethodGetCQEvent,
}

// Empty is the params or result of methods that have none.
type Empty struct{}

// HelloParams opens a session.
type HelloParams struct {
	Version int    `json:"version"`
	Client  string `json:"client,omitempty"`
	// Tunnel is the tester's UDP tunnel address (HOST:PORT) when the
	// data path is the netio tunnel: the IUT sends there and reads tunnel
	// datagrams from nowhere else.
	Tunnel string `json:"tunnel,omitempty"`
}

// Implementation identifies the IUT (it fills the report's header).
type Implementation struct {
	Vendor   string `json:"vendor,omitempty"`
	Model    string `json:"model,omitempty"`
	Version  string `json:"version,omitempty"`
	Firmware string `json:"firmware,omitempty"`
	Driver   string `json:"driver,omitempty"`
}

// Port is one NIC port (fabric plane) of the IUT: its 1-based number and
// the addresses the tester sends to on it.
type Port struct {
	Port int    `json:"port"`
	MAC  string `json:"mac"`
	IP   string `json:"ip"`
}

// Device holds the device limits (mrc_device_attr) the tester must stay
// within. Zero fields take the defaults of control-protocol.md.
type Device struct {
	MaxMPR        int   `json:"max_mpr,omitempty"`
	MPRResolution int   `json:"mpr_resolution,omitempty"`
	MaxWIMM       int   `json:"max_wimm,omitempty"`
	MaxWIMMDest   int   `json:"max_wimm_dest,omitempty"`
	MaxSendWR     int   `json:"max_send_wr,omitempty"`
	MaxRecvWR     int   `json:"max_recv_wr,omitempty"`
	PathMTUs      []int `json:"path_mtus,omitempty"`
}

// HelloResult describes the IUT.
type HelloResult struct {
	Version        int            `json:"version"`
	Implementation Implementation `json:"implementation"`
	Ports          []Port         `json:"ports"`
	// Methods are the methods the server implements.
	Methods []string `json:"methods"`
	// Features are the PICS features (conformance.FeatureDocs) the IUT
	// declares; the tester uses them when it is given no PICS file.
	Features []string `json:"features,omitempty"`
	Device   Device   `json:"device"`
	// EVMode is "stev" (default), "udp" or "srv6".
	EVMode string `json:"ev_mode,omitempty"`
}

// EV is one entry of an EV profile: the value and the 1-based port it
// leaves on.
type EV struct {
	Value uint32 `json:"value"`
	Port  int    `json:"port"`
}

// EVProfile is mrc_ctl_ev_profile_attr, put ONLINE by the controller.
type EVProfile struct {
	ID              uint64 `json:"id"`
	EVs             []EV   `json:"evs"`
	ActivePerPlane  int    `json:"active_per_plane,omitempty"`
	MinActive       int    `json:"min_active,omitempty"`
	ProbeIntervalNs int64  `json:"probe_interval_ns,omitempty"`
	ProbeSuccesses  int    `json:"probe_successes,omitempty"`
}

// NSCC holds the NSCC parameters the tester sets; zero fields keep the
// IUT's defaults.
type NSCC struct {
	BaseRTTNs     int64 `json:"base_rtt_ns,omitempty"`
	TargetDelayNs int64 `json:"target_delay_ns,omitempty"`
	MaxCwnd       int64 `json:"max_cwnd,omitempty"`
}

// CC algorithm names.
const (
	CCNone = "none"
	CCNSCC = "uet-1.0-nscc"
)

// CCProfile is mrc_ctl_cc_profile_attr.
type CCProfile struct {
	ID        uint64 `json:"id"`
	Algorithm string `json:"algorithm"`
	NSCC      *NSCC  `json:"nscc,omitempty"`
}

// Memory access flags of reg_mr.
const (
	AccessLocalWrite  = "local_write"
	AccessRemoteWrite = "remote_write"
)

// RegMRParams registers a memory region of Length bytes.
type RegMRParams struct {
	Length uint64   `json:"length"`
	Access []string `json:"access"`
}

// MR is a registered region: a handle, its address and remote key.
type MR struct {
	MR     uint32 `json:"mr"`
	VA     uint64 `json:"va"`
	RKey   uint32 `json:"rkey"`
	Length uint64 `json:"length"`
}

// WriteMRParams writes Data (base64 in JSON) at Offset of a region.
type WriteMRParams struct {
	MR     uint32 `json:"mr"`
	Offset uint64 `json:"offset"`
	Data   []byte `json:"data"`
}

// ReadMRParams reads Length bytes at Offset of a region.
type ReadMRParams struct {
	MR     uint32 `json:"mr"`
	Offset uint64 `json:"offset"`
	Length uint64 `json:"length"`
}

// ReadMRResult carries the bytes read.
type ReadMRResult struct {
	Data []byte `json:"data"`
}

// CreateQPParams creates a QP in RESET.
type CreateQPParams struct {
	MaxSendWR int `json:"max_send_wr,omitempty"`
	MaxRecvWR int `json:"max_recv_wr,omitempty"`
	// Timestamps asks for a TSETH in every write packet (REQ-HDR-1).
	Timestamps bool `json:"timestamps,omitempty"`
	// Channel creates the QP's CQ on this completion channel (from
	// create_comp_channel); 0: none.
	Channel uint32 `json:"channel,omitempty"`
}

// QPNResult names a QP.
type QPNResult struct {
	QPN uint32 `json:"qpn"`
}

// QP states, as in verbs.
const (
	StateReset = "RESET"
	StateInit  = "INIT"
	StateRTR   = "RTR"
	StateRTS   = "RTS"
	StateError = "ERROR"
	StateSQD   = "SQD" // send queue drain (QP-ST-12)
)

// AV is the address vector of the peer (IBV_QP_AV).
type AV struct {
	MAC      string `json:"mac"`
	IP       string `json:"ip"`
	HopLimit int    `json:"hop_limit,omitempty"`
}

// Retry is mrc_qp_attr.retry.
type Retry struct {
	LinearCnt int `json:"linear_cnt"`
	ExpCnt    int `json:"exp_cnt"`
}

// QP capability names (MRC_QP_CAP_*).
const (
	CapTrimNACKDestUnsupported = "trim_nack_dest_unsupported"
	CapDynamicMPR              = "dynamic_mpr"
	CapSvcTimeDestUnsupported  = "svc_time_dest_unsupported"
)

// QPAttr holds the attributes of a modify_qp. A field that is present is
// in the attribute mask; absent fields are not. Numbers are plain ints so
// that the IUT, not the JSON decoder, rejects out-of-range values.
type QPAttr struct {
	EVProfileID *uint64   `json:"ev_profile_id,omitempty"`
	CCProfileID *uint64   `json:"cc_profile_id,omitempty"`
	PKeyIndex   *int      `json:"pkey_index,omitempty"`
	AccessFlags *int      `json:"access_flags,omitempty"`
	MaxWIMMDest *int      `json:"max_wimm_dest,omitempty"`
	MPRDest     *int      `json:"mpr_dest,omitempty"`
	Cap         *[]string `json:"cap,omitempty"`
	PathMTU     *int      `json:"path_mtu,omitempty"`
	DestQPN     *uint32   `json:"dest_qpn,omitempty"`
	RQPSN       *uint32   `json:"rq_psn,omitempty"`
	AV          *AV       `json:"av,omitempty"`
	MaxWIMM     *int      `json:"max_wimm,omitempty"`
	MPR         *int      `json:"mpr,omitempty"`
	Retry       *Retry    `json:"retry,omitempty"`
	Timeout     *int      `json:"timeout,omitempty"`
	SQPSN       *uint32   `json:"sq_psn,omitempty"`
	// VendorCfg is MRC_QP_VENDOR_CFG in hex, at most 128 bytes (CTL-QPH-3).
	VendorCfg *string `json:"vendor_cfg,omitempty"`
	// Hint is MRC_QP_HINT at INIT: a create_qp_hint handle, 0 for NULL.
	Hint *uint32 `json:"hint,omitempty"`
	// SQDNotify is IBV_QP_EN_SQD_ASYNC_NOTIFY at RTS→SQD: raise
	// SQ_DRAINED once the send queue is drained (CTL-AEV-6).
	SQDNotify *bool `json:"en_sqd_async_notify,omitempty"`
}

// ModifyQPParams moves a QP to State with Attr.
type ModifyQPParams struct {
	QPN   uint32 `json:"qpn"`
	State string `json:"state"`
	Attr  QPAttr `json:"attr"`
}

// QPNParams names a QP.
type QPNParams struct {
	QPN uint32 `json:"qpn"`
}

// EV states (EV-ST-1), as wire/evstate names them.
const (
	EVGood       = "GOOD"
	EVSkip       = "SKIP"
	EVAssumedBad = "ASSUMED_BAD"
	EVDenied     = "DENIED"
)

// EVInfo is one EV of a QP's table.
type EVInfo struct {
	Value  uint32 `json:"value"`
	Port   int    `json:"port"`
	State  string `json:"state"`
	Active bool   `json:"active"`
}

// QueryQPResult is a QP's state. EVs is optional: an IUT that cannot
// report per-EV state leaves it out.
type QueryQPResult struct {
	State      string   `json:"state"`
	ErrorCause string   `json:"error_cause,omitempty"`
	EVs        []EVInfo `json:"evs,omitempty"`
	VendorCfg  string   `json:"vendor_cfg,omitempty"` // hex, trailing zero bytes left out
}

// Work-request opcodes (enum ibv_wr_opcode names).
const (
	OpRDMAWrite        = "RDMA_WRITE"
	OpRDMAWriteWithImm = "RDMA_WRITE_WITH_IMM"
	OpSend             = "SEND"
	OpSendWithImm      = "SEND_WITH_IMM"
	OpRDMARead         = "RDMA_READ"
	OpAtomicCmpSwap    = "ATOMIC_CMP_AND_SWP"
	OpAtomicFetchAdd   = "ATOMIC_FETCH_AND_ADD"
	OpRecvRDMAWithImm  = "RECV_RDMA_WITH_IMM" // completions only
)

// SGE is a local buffer: a region, offset and length.
type SGE struct {
	MR     uint32 `json:"mr"`
	Offset uint64 `json:"offset"`
	Length uint64 `json:"length"`
}

// Remote is the target of a write.
type Remote struct {
	VA   uint64 `json:"va"`
	RKey uint32 `json:"rkey"`
}

// PostSendParams posts one send work request.
type PostSendParams struct {
	QPN    uint32 `json:"qpn"`
	WRID   uint64 `json:"wr_id"`
	Opcode string `json:"opcode"`
	Local  *SGE   `json:"local,omitempty"`
	Remote Remote `json:"remote"`
	Imm    uint32 `json:"imm,omitempty"`
	// Unsignaled suppresses the success completion.
	Unsignaled bool `json:"unsignaled,omitempty"`
	// Solicited is IBV_SEND_SOLICITED (WIRE-BTH-10, CTL-CQ-2).
	Solicited bool `json:"solicited,omitempty"`
}

// PostRecvParams posts one receive work request.
type PostRecvParams struct {
	QPN  uint32 `json:"qpn"`
	WRID uint64 `json:"wr_id"`
}

// PollCQParams polls up to Max completions of a QP (0 means all).
type PollCQParams struct {
	QPN uint32 `json:"qpn"`
	Max int    `json:"max,omitempty"`
}

// Completion statuses (ibv_wc_status names).
const (
	WCSuccess          = "SUCCESS"
	WCFlushErr         = "WR_FLUSH_ERR"
	WCRetryExcErr      = "RETRY_EXC_ERR"
	WCRemOpErr         = "REM_OP_ERR"
	WCRemInvReqErr     = "REM_INV_REQ_ERR"
	WCRemAccessErr     = "REM_ACCESS_ERR"
	WCGeneralErr       = "GENERAL_ERR"
	WCOpcodeRecvWthImm = OpRecvRDMAWithImm
)

// Completion is one work completion.
type Completion struct {
	WRID    uint64 `json:"wr_id"`
	Status  string `json:"status"`
	Opcode  string `json:"opcode"`
	ByteLen uint32 `json:"byte_len"`
	Imm     uint32 `json:"imm,omitempty"`
	Recv    bool   `json:"recv,omitempty"`
	// Solicited: a receive completion of a WriteImm sent with se.
	Solicited bool `json:"solicited,omitempty"`
}

// PollCQResult carries the completions, oldest first.
type PollCQResult struct {
	Completions []Completion `json:"completions"`
}

// QueryCountersParams asks for a QP's counters, or the node's when QPN is
// absent.
type QueryCountersParams struct {
	QPN *uint32 `json:"qpn,omitempty"`
}

// CountersResult maps counter names to values; the names the tester
// understands are listed in control-protocol.md.
type CountersResult struct {
	Counters map[string]uint64 `json:"counters"`
}

// SetPortStatusParams sets the IUT's local port state: bit n = port n up,
// bit 0 unused (WIRE-ERTH-2).
type SetPortStatusParams struct {
	Mask uint32 `json:"mask"`
}

// ModifyEVStateParams is MODIFY_EV_STATE on one QP.
type ModifyEVStateParams struct {
	QPN   uint32 `json:"qpn"`
	EV    uint32 `json:"ev"`
	State string `json:"state"`
}

// Resource conditions of set_resource_condition.
const (
	ResourcesOK    = "ok"
	ResNoBitmap    = "no_bitmap"
	ResNoPktBuffer = "no_pkt_buffer"
	ResNoResource  = "no_resource"
)

// Endpoint operations of ep_send and ep_poll.
const (
	EPPortStatus = "PORT_STATUS_UPDATE"
	EPEVProbe    = "EV_PROBE"
)

// SetResourceConditionParams simulates a responder resource shortage.
type SetResourceConditionParams struct {
	QPN       uint32 `json:"qpn"`
	Condition string `json:"condition"`
}

// Peer addresses another node.
type Peer struct {
	MAC string `json:"mac"`
	IP  string `json:"ip"`
}

// EPSendParams sends one endpoint request (mrc_ctl_ep_req).
type EPSendParams struct {
	Op         string `json:"op"`
	ReqID      uint16 `json:"req_id"`
	Dst        Peer   `json:"dst"`
	EV         uint32 `json:"ev"`
	Port       int    `json:"port"`
	DSCP       int    `json:"dscp"`
	PortStatus uint32 `json:"port_status,omitempty"`
}

// EPResponse is one endpoint response (mrc_ctl_ep_rsp).
type EPResponse struct {
	ReqID uint16 `json:"req_id"`
	Op    string `json:"op"`
	Port  int    `json:"port"`
	RTTNs int64  `json:"rtt_ns"`
	// AdjSvcTime is adj_svc_time (CTL-SVC-1); only ep_batch_result fills it.
	AdjSvcTime bool `json:"adj_svc_time,omitempty"`
}

// EPPollResult returns the endpoint responses and timeouts since the last
// ep_poll.
type EPPollResult struct {
	Responses []EPResponse `json:"responses"`
	Timeouts  []uint16     `json:"timeouts"`
}

// MaxCQPoll bounds the completions one poll_cq returns.
const MaxCQPoll = 4096

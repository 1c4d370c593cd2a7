package control

// Params and results of the control API object methods: EV Format, EV and
// CC profiles with their lifecycle, device attributes and port
// administrative state (mrc_ctl.h; spec/36-api-objects.md). An optional
// field that is present stands for its bit in the API's attribute mask.
// Errors carry the API's errno first in their message ("EBUSY: ...") and
// map to codes: EINVAL invalid_argument, EBUSY invalid_state, E2BIG
// resource_exhausted, ENOENT not_found.

// Profile states and modes, as strings.
const (
	ProfileInit    = "INIT"
	ProfileOffline = "OFFLINE"
	ProfileOnline  = "ONLINE"

	FmtSTEV = "STEV"
	FmtSRv6 = "SRV6"
	FmtUDP  = "UDP"

	EVModeAuto      = "AUTO"
	EVModeExplicit  = "EXP"
	EVModeGenerated = "GEN"

	EVOpReplace     = "replace_ev"
	EVOpModifyState = "modify_ev_state"
)

// CtlEV is struct mrc_ctl_ev: Val is the EV's bytes in hex (at most 64
// digits, most significant bit of the first byte first), Port 1-based.
// An empty Val with port 0 is MRC_CTL_EV_UNPOPULATED.
type CtlEV struct {
	Val  string `json:"val"`
	Port int    `json:"port"`
}

// EVField is struct mrc_ctl_ev_field.
type EVField struct {
	Width   uint32 `json:"width"`
	InitVal uint32 `json:"init_val"`
	MinVal  uint32 `json:"min_val"`
	MaxVal  uint32 `json:"max_val"`
	Mask    uint32 `json:"mask"`
}

// EVOpEntry is struct mrc_ctl_ev_op_entry.
type EVOpEntry struct {
	EV        CtlEV  `json:"ev"`
	New       *CtlEV `json:"new,omitempty"`
	State     string `json:"state,omitempty"` // GOOD, ASSUMED_BAD, DENIED
	AllCopies bool   `json:"all_copies,omitempty"`
}

// EVOp is an EV operation: replace_ev or modify_ev_state.
type EVOp struct {
	Op      string      `json:"op"`
	Entries []EVOpEntry `json:"entries"`
}

// ModifyEVFmtProfileParams is mrc_ctl_modify_ev_fmt_profile.
type ModifyEVFmtProfileParams struct {
	ID     uint64  `json:"id"`
	State  *string `json:"state,omitempty"`
	Mode   *string `json:"mode,omitempty"`
	Widths []int   `json:"widths,omitempty"` // MODIFY_FIELDS
}

// ModifyEVProfileParams is mrc_ctl_modify_ev_profile.
type ModifyEVProfileParams struct {
	ID        uint64    `json:"id"`
	State     *string   `json:"state,omitempty"`
	Mode      *string   `json:"mode,omitempty"`
	FmtID     *uint64   `json:"fmt_id,omitempty"`
	Count     *uint32   `json:"count,omitempty"`
	MinActive *uint32   `json:"min_active,omitempty"`
	EventMask *[]string `json:"event_mask,omitempty"`
	EVOp      *EVOp     `json:"ev_op,omitempty"`
	Fields    []EVField `json:"fields,omitempty"` // MODIFY_FIELDS
}

// IDParams names a profile.
type IDParams struct {
	ID uint64 `json:"id"`
}

// QueryEVProfileResult is mrc_ctl_query_ev_profile with QUERY_EV_ARRAY and
// QUERY_FIELDS.
type QueryEVProfileResult struct {
	State     string      `json:"state"`
	Mode      string      `json:"mode,omitempty"`
	FmtID     uint64      `json:"fmt_id"`
	Count     uint32      `json:"count"`
	MinActive uint32      `json:"min_active"`
	Fields    []EVField   `json:"fields,omitempty"`
	EVs       []EVOpEntry `json:"evs,omitempty"`
	// Wire is the value each EV puts into packets (its expansion, for
	// STEV and UDP the EV the UDP source port and flow label carry),
	// aligned with EVs.
	Wire []uint32 `json:"wire,omitempty"`
}

// ModifyCCProfileParams is mrc_ctl_modify_cc_profile.
type ModifyCCProfileParams struct {
	ID        uint64  `json:"id"`
	State     *string `json:"state,omitempty"`
	Algorithm *string `json:"algorithm,omitempty"` // CCNone or CCNSCC
	NSCC      *NSCC   `json:"nscc,omitempty"`      // CONFIG
}

// DeviceCtl is struct mrc_ctl_device_attr.
type DeviceCtl struct {
	ProtocolVersion   uint32   `json:"mrc_ctl_protocol_version"`
	EVMaxFmtProfiles  uint32   `json:"ev_max_fmt_profiles"`
	EVMaxProfiles     uint32   `json:"ev_max_profiles"`
	EVMaxCount        uint32   `json:"ev_max_count"`
	EVFreeCount       uint32   `json:"ev_free_count"`
	EVMaxCountProfile uint32   `json:"ev_max_count_profile"`
	EVCountAlign      uint32   `json:"ev_count_align"`
	EVMaxWidth        uint32   `json:"ev_max_width"`
	EVFmtModeMask     uint32   `json:"ev_fmt_mode_mask"`
	EVModeMask        uint32   `json:"ev_mode_mask"`
	EVOpMaxEntries    uint32   `json:"ev_op_max_entries"`
	CCMaxProfiles     uint32   `json:"cc_max_profiles"`
	CCAlgorithms      []string `json:"cc_algorithms"`
	PhyPortMask       uint32   `json:"phy_port_mask"`
	OptAttr           uint32   `json:"opt_attr"`
}

// PortAdminParams is mrc_ctl_modify_port (Enabled set) or
// mrc_ctl_query_port (Enabled absent).
type PortAdminParams struct {
	Port    int   `json:"port"`
	Enabled *bool `json:"enabled,omitempty"`
}

// PortAdminResult is a port's administrative state.
type PortAdminResult struct {
	Port    int  `json:"port"`
	Enabled bool `json:"enabled"`
}

// ReqNotifyParams is mrc_req_notify_cq on a QP's CQ.
type ReqNotifyParams struct {
	QPN           uint32 `json:"qpn"`
	SolicitedOnly bool   `json:"solicited_only,omitempty"`
}

// CQEventsParams asks how many CQ events a QP's CQ raised and has not had
// acknowledged; Ack acknowledges them (mrc_get_cq_event,
// mrc_ack_cq_events).
type CQEventsParams struct {
	QPN uint32 `json:"qpn"`
	Ack bool   `json:"ack,omitempty"`
}

// CQEventsResult is the number of CQ events.
type CQEventsResult struct {
	Events uint64 `json:"events"`
}

// Asynchronous event types (enum ibv_event_type names without IBV_EVENT_).
const (
	AsyncCQErr       = "CQ_ERR"
	AsyncQPFatal     = "QP_FATAL"
	AsyncQPReqErr    = "QP_REQ_ERR"
	AsyncQPAccessErr = "QP_ACCESS_ERR"
	AsyncCommEst     = "COMM_EST"
	AsyncSQDrained   = "SQ_DRAINED"
	AsyncPortErr     = "PORT_ERR"
	AsyncPortActive  = "PORT_ACTIVE"
)

// AsyncEvent is struct mrc_async_event.
type AsyncEvent struct {
	Type string `json:"type"`
	QPN  uint32 `json:"qpn,omitempty"`
	Port int    `json:"port,omitempty"`
}

// AsyncEventsResult returns, and acknowledges, the asynchronous events
// queued since the last call, oldest first.
type AsyncEventsResult struct {
	Events  []AsyncEvent `json:"events"`
	Dropped uint64       `json:"dropped,omitempty"`
}

// Versions is what mrc_query_version and mrc_ctl_query_version return,
// each MAJOR<<24 | MINOR<<16 | SUBMINOR.
type Versions struct {
	Current             uint32 `json:"current"`
	LastSupported       uint32 `json:"last_supported"`
	Vendor              uint32 `json:"vendor"`
	LastSupportedVendor uint32 `json:"last_supported_vendor"`
}

// QueryVersionResult holds the MRC and the control API versions.
type QueryVersionResult struct {
	MRC Versions `json:"mrc"`
	Ctl Versions `json:"ctl"`
}

// CreateContextParams is mrc_create_context's struct mrc_context_attr:
// the API versions the client uses, 0 for the provider's choice.
type CreateContextParams struct {
	APIVersion    uint32 `json:"api_version_used,omitempty"`
	VendorVersion uint32 `json:"vendor_api_version_used,omitempty"`
}

// ContextResult names a context and the versions it uses.
type ContextResult struct {
	Context       uint32 `json:"context"`
	APIVersion    uint32 `json:"api_version_used"`
	VendorVersion uint32 `json:"vendor_api_version_used"`
}

// ContextParams names a context: destroy_context, and query_device_ex
// (mrc_ctl_query_device_ex on that context; result DeviceCtl).
type ContextParams struct {
	Context uint32 `json:"context"`
}

// ChannelParams names a completion channel: create_comp_channel's
// result, destroy_comp_channel's and get_cq_event's params.
type ChannelParams struct {
	Channel uint32 `json:"channel"`
}

// CQEventResult is mrc_get_cq_event on a non-blocking channel: the QP
// whose CQ raised the oldest waiting event, or Found false when none
// waits.
type CQEventResult struct {
	QPN   uint32 `json:"qpn,omitempty"`
	Found bool   `json:"found"`
}

// EPBatchSendParams is the sending half of mrc_ctl_ep_batch_send_wait:
// requests of one op, and rsp_timeout.
type EPBatchSendParams struct {
	Op        string         `json:"op"`
	Requests  []EPSendParams `json:"requests"`
	TimeoutNs int64          `json:"timeout_ns"`
}

// EPBatchSendResult names the batch.
type EPBatchSendResult struct {
	Batch uint32 `json:"batch"`
}

// EPBatchResultParams asks for a batch's outcome.
type EPBatchResultParams struct {
	Batch uint32 `json:"batch"`
}

// EPBatchResult is the waiting half: Done once every request is answered
// or the timeout passed; then Responses in arrival order and Error the
// errno ("ETIMEDOUT") or empty.
type EPBatchResult struct {
	Done      bool         `json:"done"`
	Responses []EPResponse `json:"responses,omitempty"`
	Error     string       `json:"error,omitempty"`
}

// QPHint is struct mrc_qp_hint_attr (create_qp_hint params, query_qp_hint
// result); VendorCfg in hex.
type QPHint struct {
	NumQPsPerPeer      int32  `json:"num_qps_per_peer"`
	NumSendPeers       int32  `json:"num_send_peers"`
	NumRemoteRecvPeers int32  `json:"num_remote_recv_peers"`
	VendorCfg          string `json:"vendor_cfg,omitempty"`
}

// QPHintParams names a QP hint; QPHintResult returns a new one's handle.
type QPHintParams struct {
	Hint uint32 `json:"hint"`
}

// QPHintResult is create_qp_hint's result.
type QPHintResult = QPHintParams

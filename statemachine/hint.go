package statemachine

// QP hints (mrc_create_qp_hint, mrc_modify_qp_hint, mrc_query_qp_hint,
// mrc_destroy_qp_hint): traffic-pattern hints a QP may name at INIT
// (MRC_QP_HINT). They are advisory; the reference keeps them and behaves
// the same whatever they say (CTL-QPH-1, CTL-QPH-2, AMB-72).

// QPHintAttrMask is enum mrc_qp_hint_attr_mask.
type QPHintAttrMask uint32

// QP hint attribute mask bits.
const (
	HintNumQPsPerPeer      QPHintAttrMask = 1 << 0
	HintNumSendPeers       QPHintAttrMask = 1 << 1
	HintNumRemoteRecvPeers QPHintAttrMask = 1 << 2
	HintVendorCfg          QPHintAttrMask = 1 << 31
)

// QPHintAttr is struct mrc_qp_hint_attr.
type QPHintAttr struct {
	NumQPsPerPeer      int32
	NumSendPeers       int32
	NumRemoteRecvPeers int32
	VendorCfg          [VendorCfgSize]byte
}

// QPHints is a context's QP hints, at most Max (max_qp_hint of
// mrc_device_attr). Handles start at 1; 0 is NULL.
type QPHints struct {
	max   int
	next  uint32
	hints map[uint32]*qpHint
}

type qpHint struct {
	attr  QPHintAttr
	users int
}

// NewQPHints returns an empty hint table holding at most max hints.
func NewQPHints(max int) *QPHints {
	return &QPHints{max: max, hints: map[uint32]*qpHint{}}
}

func (a *QPHintAttr) apply(b QPHintAttr, m QPHintAttrMask) error {
	if m&^(HintNumQPsPerPeer|HintNumSendPeers|HintNumRemoteRecvPeers|HintVendorCfg) != 0 {
		return ctlErr(EINVAL, "hint mask %#x: unknown bits", uint32(m))
	}
	n := *a
	if m&HintNumQPsPerPeer != 0 {
		n.NumQPsPerPeer = b.NumQPsPerPeer
	}
	if m&HintNumSendPeers != 0 {
		n.NumSendPeers = b.NumSendPeers
	}
	if m&HintNumRemoteRecvPeers != 0 {
		n.NumRemoteRecvPeers = b.NumRemoteRecvPeers
	}
	if m&HintVendorCfg != 0 {
		n.VendorCfg = b.VendorCfg
	}
	if n.NumQPsPerPeer < 0 || n.NumSendPeers < 0 || n.NumRemoteRecvPeers < 0 {
		return ctlErr(EINVAL, "hint counts must not be negative")
	}
	*a = n
	return nil
}

// Create is mrc_create_qp_hint: E2BIG beyond max_qp_hint, EINVAL for a
// negative count (CTL-QPH-1).
func (h *QPHints) Create(a QPHintAttr) (uint32, error) {
	if len(h.hints) >= h.max {
		return 0, ctlErr(E2BIG, "max_qp_hint %d reached", h.max)
	}
	var x QPHintAttr
	if err := x.apply(a, HintNumQPsPerPeer|HintNumSendPeers|HintNumRemoteRecvPeers|HintVendorCfg); err != nil {
		return 0, err
	}
	h.next++
	h.hints[h.next] = &qpHint{attr: x}
	return h.next, nil
}

func (h *QPHints) get(id uint32) (*qpHint, error) {
	x := h.hints[id]
	if x == nil {
		return nil, ctlErr(EINVAL, "no QP hint %d", id)
	}
	return x, nil
}

// Modify is mrc_modify_qp_hint: the attributes in m change, or none.
func (h *QPHints) Modify(id uint32, a QPHintAttr, m QPHintAttrMask) error {
	x, err := h.get(id)
	if err != nil {
		return err
	}
	return x.attr.apply(a, m)
}

// Query is mrc_query_qp_hint.
func (h *QPHints) Query(id uint32) (QPHintAttr, error) {
	x, err := h.get(id)
	if err != nil {
		return QPHintAttr{}, err
	}
	return x.attr, nil
}

// Use records that a QP names hint id (MRC_QP_HINT at INIT); 0 is NULL
// and always valid.
func (h *QPHints) Use(id uint32) error {
	if id == 0 {
		return nil
	}
	x, err := h.get(id)
	if err != nil {
		return err
	}
	x.users++
	return nil
}

// Release undoes Use when the QP is destroyed.
func (h *QPHints) Release(id uint32) {
	if x := h.hints[id]; x != nil && x.users > 0 {
		x.users--
	}
}

// Destroy is mrc_destroy_qp_hint: a hint a QP still names is EBUSY
// (CTL-QPH-1, AMB-72).
func (h *QPHints) Destroy(id uint32) error {
	x, err := h.get(id)
	if err != nil {
		return err
	}
	if x.users > 0 {
		return ctlErr(EBUSY, "QP hint %d: %d QPs name it", id, x.users)
	}
	delete(h.hints, id)
	return nil
}

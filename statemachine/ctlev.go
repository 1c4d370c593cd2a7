package statemachine

import (
	"encoding/binary"
	"math/big"
	"slices"
)

// EVProfileAttrMask is enum mrc_ctl_ev_profile_attr_mask.
type EVProfileAttrMask uint32

// EV profile attribute mask bits.
const (
	EVAttrState     EVProfileAttrMask = 1 << 0
	EVAttrCurState  EVProfileAttrMask = 1 << 1
	EVAttrMode      EVProfileAttrMask = 1 << 2
	EVAttrFmtID     EVProfileAttrMask = 1 << 3
	EVAttrCount     EVProfileAttrMask = 1 << 4
	EVAttrMinActive EVProfileAttrMask = 1 << 5
	EVAttrEventMask EVProfileAttrMask = 1 << 6
	EVAttrEVOp      EVProfileAttrMask = 1 << 7
	EVAttrFieldsOp  EVProfileAttrMask = 1 << 8
	EVAttrVendorCfg EVProfileAttrMask = 1 << 31
)

// EVOp is enum mrc_ctl_ev_op.
type EVOp uint8

// EV operations.
const (
	EVOpReplaceEV     EVOp = 0
	EVOpModifyEVState EVOp = 1
	EVOpQueryEVState  EVOp = 2
	EVOpQueryEVArray  EVOp = 3
)

// EVOpFlags is enum mrc_ctl_ev_op_flags.
type EVOpFlags uint32

// EVOpAllCopies asks REPLACE_EV to replace every occurrence of the EV,
// not one (CTL-OP-2).
const EVOpAllCopies EVOpFlags = 1 << 0

// EVOpEntry is struct mrc_ctl_ev_op_entry.
type EVOpEntry struct {
	EV    CtlEV // the subject EV (QUERY_EV_ARRAY: filled)
	New   CtlEV // REPLACE_EV: its replacement
	State EVState
	Flags EVOpFlags
}

// EVProfileAttr is struct mrc_ctl_ev_profile_attr.
type EVProfileAttr struct {
	State        ProfileState
	CurState     ProfileState
	Mode         EVGenMode
	FmtProfileID uint64
	Count        uint32
	MinActive    uint32
	EventMask    EVEventMask
	// EVOp applies to every entry of Entries. For QUERY_EV_ARRAY, a short
	// Entries fails with E2BIG and EntryCount the number needed.
	EVOp       EVOp
	Entries    []EVOpEntry
	EntryCount int
	// FieldsOp: MODIFY_FIELDS sets Fields; QUERY_FIELDS fills them (E2BIG
	// with FieldCount when short).
	FieldsOp   FieldsOp
	Fields     []EVField
	FieldCount int
	VendorCfg  [VendorCfgSize]byte
}

type evProfileObj struct {
	state     ProfileState
	set       EVProfileAttrMask // attributes configured since INIT
	mode      EVGenMode
	fmtID     uint64
	count     uint32
	minActive uint32
	eventMask EVEventMask
	fields    []EVField
	evs       []CtlEV
	st        []EVState // the controller's state of each entry (GOOD unless modified)
	users     int       // QPs attached (AttachQP)
	vendor    [VendorCfgSize]byte
}

func (p *evProfileObj) clone() *evProfileObj {
	n := *p
	n.fields, n.evs, n.st = slices.Clone(p.fields), slices.Clone(p.evs), slices.Clone(p.st)
	return &n
}

// modifiable returns the attribute bits a modify may carry in state s
// (CTL-PRF-3, CTL-PRF-4).
func (c *Controller) evModifiable(s ProfileState) EVProfileAttrMask {
	all := EVAttrState | EVAttrMode | EVAttrFmtID | EVAttrCount | EVAttrMinActive | EVAttrEventMask | EVAttrFieldsOp | EVAttrVendorCfg
	switch s {
	case ProfileInit:
		return all
	case ProfileOffline:
		return all | EVAttrEVOp
	}
	m := EVAttrState | EVAttrEVOp
	if c.hasOpt(OptEVProfileModifyOnline) {
		m |= EVAttrEventMask | EVAttrFieldsOp
	}
	return m
}

// ModifyEVProfile is mrc_ctl_modify_ev_profile (CTL-PRF-*, CTL-OP-*). The
// attributes and the field operation apply together or not at all; an
// EV_OP applies entry by entry and stops at the first failing one, whose
// error is returned, keeping the entries before it (CTL-OP-4).
func (c *Controller) ModifyEVProfile(id uint64, a *EVProfileAttr, mask EVProfileAttrMask) error {
	return c.ModifyEVProfileBound(id, a, mask, nil)
}

// ModifyEVProfileBound is ModifyEVProfile on a profile QPs are bound to:
// when the modify would leave the profile ONLINE with other EVs, rebind
// is called with the profile as it would then be (as EVProfile returns
// it) before anything is committed, and its error refuses the modify,
// which then changes nothing — not even the entries before a failing one
// (CTL-OP-3, CTL-OP-4). A nil rebind accepts every profile.
func (c *Controller) ModifyEVProfileBound(id uint64, a *EVProfileAttr, mask EVProfileAttrMask, rebind func(EVProfile) error) error {
	p := c.evs[id]
	if p == nil {
		if len(c.evs) >= int(c.dev.EVMaxProfiles) {
			return ctlErr(E2BIG, "EV profile %d: the device holds %d", id, c.dev.EVMaxProfiles)
		}
		p = &evProfileObj{}
	}
	if mask&EVAttrEVOp != 0 && mask&EVAttrFieldsOp != 0 {
		return ctlErr(EINVAL, "EV profile %d: EV_OP and EV_FIELDS_OP together", id)
	}
	if extra := mask &^ c.evModifiable(p.state); extra != 0 {
		return ctlErr(EINVAL, "EV profile %d is %s: attributes %#x cannot be modified (CTL-PRF-3)", id, p.state, uint32(extra))
	}
	if mask&EVAttrEVOp != 0 && (a.EVOp == EVOpQueryEVState || a.EVOp == EVOpQueryEVArray) {
		return ctlErr(EINVAL, "EV profile %d: a query EV_OP in a modify", id)
	}
	if p.state == ProfileOnline && mask&EVAttrEVOp != 0 && a.EVOp == EVOpReplaceEV && !c.hasOpt(OptEVProfileModifyOnline) {
		return ctlErr(EINVAL, "EV profile %d is ONLINE: REPLACE_EV needs MRC_CTL_OPT_CAP_EV_PROFILE_MODIFY_ONLINE", id)
	}
	if p.state == ProfileOnline && mask&EVAttrState != 0 && a.State != ProfileOnline && p.users > 0 {
		return ctlErr(EBUSY, "EV profile %d: %d QPs use it", id, p.users)
	}
	if mask&EVAttrFieldsOp != 0 && a.FieldsOp == FieldsQuery {
		return ctlErr(EINVAL, "EV profile %d: QUERY_FIELDS in a modify", id)
	}
	n := p.clone()
	if err := c.applyEVAttrs(id, n, a, mask); err != nil {
		return err
	}
	if mask&EVAttrEVOp != 0 {
		if err := c.applyEVOp(id, n, a); err != nil {
			if rerr := c.checkRebind(id, p, n, rebind); rerr != nil {
				return rerr
			}
			p.evs, p.st = n.evs, n.st // the entries before the failing one stay (CTL-OP-4)
			return err
		}
	}
	if mask&EVAttrState != 0 {
		if err := c.transitionEV(id, p.state, n, a.State); err != nil {
			return err
		}
	}
	if n.state == ProfileOnline {
		if _, err := c.compileEV(id, n); err != nil {
			return err
		}
	}
	if err := c.checkRebind(id, p, n, rebind); err != nil {
		return err
	}
	c.evs[id] = n
	return nil
}

// checkRebind asks rebind whether the QPs bound to ONLINE profile p can
// take n, its EVs after a modify; nothing to ask when the profile is not
// ONLINE before and after or its EVs did not change.
func (c *Controller) checkRebind(id uint64, p, n *evProfileObj, rebind func(EVProfile) error) error {
	if rebind == nil || p.state != ProfileOnline || n.state != ProfileOnline || slices.Equal(p.evs, n.evs) {
		return nil
	}
	np, _, err := c.evProfileOf(id, n)
	if err != nil {
		return err
	}
	return rebind(np)
}

// applyEVAttrs sets the scalar attributes and the fields on n and keeps
// its EV array consistent with them.
func (c *Controller) applyEVAttrs(id uint64, n *evProfileObj, a *EVProfileAttr, mask EVProfileAttrMask) error {
	n.set |= mask &^ (EVAttrState | EVAttrEVOp)
	if mask&EVAttrMode != 0 {
		if !a.Mode.single() || c.dev.EVModeMask&a.Mode == 0 {
			return ctlErr(EINVAL, "EV profile %d: mode %s not in ev_mode_mask %#x", id, a.Mode, uint32(c.dev.EVModeMask))
		}
		n.mode = a.Mode
	}
	if mask&EVAttrFmtID != 0 {
		n.fmtID = a.FmtProfileID
	}
	if mask&EVAttrCount != 0 {
		cnt, err := c.alignCount(id, a.Count)
		if err != nil {
			return err
		}
		n.count = cnt
	}
	if mask&EVAttrMinActive != 0 {
		n.minActive = a.MinActive
	}
	if mask&EVAttrEventMask != 0 {
		if a.EventMask&^(EVEventGood|EVEventAssumedBad) != 0 {
			return ctlErr(EINVAL, "EV profile %d: ev_event_mask %#x: only GOOD and ASSUMED_BAD (CTL-PRF-7)", id, uint8(a.EventMask))
		}
		if a.EventMask != 0 && !c.hasOpt(OptEVEvent) {
			return ctlErr(EINVAL, "EV profile %d: ev_event_mask needs MRC_CTL_OPT_CAP_EV_EVENT", id)
		}
		n.eventMask = a.EventMask
	}
	if mask&EVAttrVendorCfg != 0 {
		n.vendor = a.VendorCfg
	}
	if mask&EVAttrFieldsOp != 0 {
		n.fields = slices.Clone(a.Fields)
	}
	if n.minActive > n.count && n.set&EVAttrMinActive != 0 && n.mode != EVModeAuto {
		return ctlErr(EINVAL, "EV profile %d: ev_min_active %d above ev_count %d", id, n.minActive, n.count)
	}
	if n.state == ProfileInit {
		return nil
	}
	if err := c.checkEVConfig(id, n); err != nil {
		return err
	}
	return c.refreshArray(id, n)
}

func (m EVGenMode) single() bool { return m != 0 && m&(m-1) == 0 }

// alignCount applies ev_max_count_profile and ev_count_align (AMB-64).
func (c *Controller) alignCount(id uint64, cnt uint32) (uint32, error) {
	al := c.dev.EVCountAlign
	if r := cnt % al; r != 0 {
		if c.policy.RejectUnalignedCount {
			return 0, ctlErr(EINVAL, "EV profile %d: ev_count %d is not a multiple of ev_count_align %d", id, cnt, al)
		}
		cnt += al - r
	}
	if cnt > c.dev.EVMaxCountProfile {
		return 0, ctlErr(E2BIG, "EV profile %d: ev_count %d above ev_max_count_profile %d", id, cnt, c.dev.EVMaxCountProfile)
	}
	return cnt, nil
}

// checkEVConfig checks what a profile past INIT needs: a supported mode,
// an ONLINE format profile for EXP and GEN, a count, and fields that fit
// the format (CTL-PRF-5).
func (c *Controller) checkEVConfig(id uint64, n *evProfileObj) error {
	if n.mode == 0 {
		return ctlErr(EINVAL, "EV profile %d: OFFLINE needs MODE", id)
	}
	if n.mode == EVModeAuto {
		return nil
	}
	if n.set&EVAttrFmtID == 0 || n.set&EVAttrCount == 0 || n.count == 0 {
		return ctlErr(EINVAL, "EV profile %d: %s mode needs FMT_ID and a non-zero COUNT", id, n.mode)
	}
	f := c.fmts[n.fmtID]
	if f == nil || f.state != ProfileOnline {
		return ctlErr(EINVAL, "EV profile %d: EV Format profile %d is not ONLINE", id, n.fmtID)
	}
	if n.mode == EVModeGenerated && len(n.fields) == 0 {
		return ctlErr(EINVAL, "EV profile %d: GEN mode needs MODIFY_FIELDS", id)
	}
	if len(n.fields) > 0 {
		return checkEVFields(f.widths, n.fields, c.dev.EVMaxWidth, n.mode == EVModeGenerated)
	}
	return nil
}

// refreshArray sizes n's EV array to its count: an explicit array keeps
// its entries and adds unpopulated ones; a generated array is generated
// again (CTL-GEN-1); populated explicit EVs must still expand.
func (c *Controller) refreshArray(id uint64, n *evProfileObj) error {
	switch n.mode {
	case EVModeAuto:
		n.evs, n.st = nil, nil
	case EVModeGenerated:
		vals, err := GenerateEVs(n.fields, int(n.count), c.policy.GenOrder)
		if err != nil {
			return err
		}
		ports := c.phyPorts()
		n.evs, n.st = make([]CtlEV, len(vals)), make([]EVState, len(vals))
		for i, v := range vals {
			n.evs[i] = CtlEV{Val: v, Port: ports[i%len(ports)]} // AMB-62: ports in turn
			n.st[i] = EVGood
		}
	case EVModeExplicit:
		for len(n.evs) < int(n.count) {
			n.evs, n.st = append(n.evs, CtlEV{}), append(n.st, EVGood)
		}
		n.evs, n.st = n.evs[:n.count], n.st[:n.count]
		for i, e := range n.evs {
			if !e.Unpopulated() {
				if _, _, err := c.expand(n, e); err != nil {
					return ctlErr(EINVAL, "EV profile %d: entry %d no longer expands: %v", id, i, err)
				}
			}
		}
	}
	return nil
}

// transitionEV moves n from state from to to (CTL-PRF-2, CTL-PRF-5,
// CTL-PRF-6).
func (c *Controller) transitionEV(id uint64, from ProfileState, n *evProfileObj, to ProfileState) error {
	if err := checkTransition("EV", id, from, to); err != nil {
		return err
	}
	switch {
	case from == ProfileInit && to == ProfileOffline:
		if err := c.checkEVConfig(id, n); err != nil {
			return err
		}
		if free := c.QueryDevice().EVFreeCount; n.count > free {
			return ctlErr(E2BIG, "EV profile %d: ev_count %d, ev_free_count %d", id, n.count, free)
		}
		n.evs, n.st = nil, nil // an explicit array starts unpopulated
		if err := c.refreshArray(id, n); err != nil {
			return err
		}
	case to == ProfileOnline && from == ProfileOffline:
		if err := c.checkEVConfig(id, n); err != nil {
			return err
		}
		if n.set&(EVAttrMinActive|EVAttrEventMask) != EVAttrMinActive|EVAttrEventMask {
			return ctlErr(EINVAL, "EV profile %d: ONLINE needs MIN_ACTIVE and EVENT_MASK", id)
		}
		if i := slices.IndexFunc(n.evs, CtlEV.Unpopulated); i >= 0 {
			return ctlErr(EINVAL, "EV profile %d: entry %d is unpopulated; REPLACE_EV every entry before ONLINE", id, i)
		}
		if err := c.checkRange(n); err != nil {
			return err
		}
	case to == ProfileInit && from == ProfileOffline:
		*n = evProfileObj{}
	}
	n.state = to
	return nil
}

// applyEVOp runs REPLACE_EV or MODIFY_EV_STATE on n, entry by entry.
func (c *Controller) applyEVOp(id uint64, n *evProfileObj, a *EVProfileAttr) error {
	if n.mode != EVModeExplicit && a.EVOp == EVOpReplaceEV {
		return ctlErr(EINVAL, "EV profile %d: REPLACE_EV needs EXP mode, not %s", id, n.mode)
	}
	if m := c.dev.EVOpMaxEntries; m != 0 && len(a.Entries) > int(m) {
		return ctlErr(E2BIG, "EV profile %d: %d entries, ev_op_max_entries %d", id, len(a.Entries), m)
	}
	for k, e := range a.Entries {
		var err error
		if a.EVOp == EVOpReplaceEV {
			err = c.replaceEV(n, e)
		} else {
			err = setEntryState(n, e)
		}
		if err != nil {
			n, msg := errnoOf(err)
			return ctlErr(n, "EV profile %d: entry %d: %s", id, k, msg)
		}
	}
	return nil
}

func errnoOf(err error) (Errno, string) {
	if e, ok := err.(*CtlError); ok {
		return e.Errno, e.Msg
	}
	return EINVAL, err.Error()
}

// replaceEV is one REPLACE_EV entry: the first occurrence of e.EV (or
// every one, with ALL_COPIES) becomes e.New in state e.State (CTL-OP-1,
// CTL-OP-2, CTL-OP-3).
func (c *Controller) replaceEV(n *evProfileObj, e EVOpEntry) error {
	if e.New.Unpopulated() {
		return ctlErr(EINVAL, "the replacement is MRC_CTL_EV_UNPOPULATED")
	}
	if err := c.checkPort(e.New.Port); err != nil {
		return err
	}
	if _, _, err := c.expand(n, e.New); err != nil {
		return err
	}
	st := e.State
	if st == EVUnknown {
		st = EVGood
	}
	if st != EVGood && st != EVAssumedBad && st != EVDenied {
		return ctlErr(EINVAL, "state %s: GOOD, ASSUMED_BAD or DENIED", st)
	}
	var keepEVs []CtlEV
	var keepSt []EVState
	if c.hasOpt(OptEVExplicitRange) {
		keepEVs, keepSt = slices.Clone(n.evs), slices.Clone(n.st)
	}
	found := false
	for i, x := range n.evs {
		if x != e.EV {
			continue
		}
		n.evs[i], n.st[i], found = e.New, st, true
		if e.Flags&EVOpAllCopies == 0 {
			break
		}
	}
	if !found {
		return ctlErr(ENOENT, "EV not in the profile")
	}
	if err := c.checkRange(n); err != nil {
		n.evs, n.st = keepEVs, keepSt
		return err
	}
	return nil
}

// checkRange applies MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE: on a device that
// advertises it an explicit array is one contiguous range, entry i being
// the base plus i, the base and each value read as the number an EV's
// bits form (the bits its profile's masks take, most significant first;
// CTL-OP-6, AMB-97). Every populated entry must lie on the range of the
// others and the range's last value must fit those bits; unpopulated
// entries are free until the profile goes ONLINE (CTL-PRF-5).
func (c *Controller) checkRange(n *evProfileObj) error {
	if !c.hasOpt(OptEVExplicitRange) || n.mode != EVModeExplicit {
		return nil
	}
	fields, err := c.fieldsOf(n)
	if err != nil {
		return err
	}
	k := 0
	for _, f := range fields {
		k += f.EVBits()
	}
	var base *big.Int
	first := 0
	for i, e := range n.evs {
		if e.Unpopulated() {
			continue
		}
		v := new(big.Int).SetBytes(e.Val[:])
		v.Rsh(v, uint(8*EVBytes-k)).Sub(v, big.NewInt(int64(i)))
		switch {
		case v.Sign() < 0:
			return ctlErr(EINVAL, "explicit range: entry %d's value is below %d, so no base puts it there (CTL-OP-6)", i, i)
		case base == nil:
			base, first = v, i
		case v.Cmp(base) != 0:
			return ctlErr(EINVAL, "explicit range: entry %d is not entry %d's value plus %d (CTL-OP-6)", i, first, i-first)
		}
	}
	if base != nil && new(big.Int).Add(base, big.NewInt(int64(len(n.evs)-1))).BitLen() > k {
		return ctlErr(EINVAL, "explicit range: base + ev_count - 1 does not fit the %d EV bits (CTL-OP-6)", k)
	}
	return nil
}

// fieldsOf returns the fields n's EVs expand by: its own, or for an
// explicit profile without fields one full-width field per format field
// (AMB-61).
func (c *Controller) fieldsOf(n *evProfileObj) ([]EVField, error) {
	f := c.fmts[n.fmtID]
	if f == nil {
		return nil, ctlErr(EINVAL, "EV Format profile %d does not exist", n.fmtID)
	}
	if len(n.fields) > 0 {
		return n.fields, nil
	}
	var fields []EVField
	for _, w := range f.widths {
		if w > 32 {
			return nil, ctlErr(EINVAL, "an explicit profile without fields needs format fields of at most 32 bits")
		}
		fields = append(fields, EVField{Width: uint32(w), Mask: widthMax(uint32(w))})
	}
	return fields, nil
}

func setEntryState(n *evProfileObj, e EVOpEntry) error {
	if e.State != EVGood && e.State != EVAssumedBad && e.State != EVDenied {
		return ctlErr(EINVAL, "state %s: GOOD, ASSUMED_BAD or DENIED", e.State)
	}
	found := false
	for i, x := range n.evs {
		if x == e.EV {
			n.st[i], found = e.State, true
		}
	}
	if !found {
		return ctlErr(ENOENT, "EV not in the profile")
	}
	return nil
}

// expand expands e by n's fields and format; an explicit profile without
// fields takes each EV as it is, one full-width field per format field
// (AMB-61).
func (c *Controller) expand(n *evProfileObj, e CtlEV) (EVValue, int, error) {
	fields, err := c.fieldsOf(n)
	if err != nil {
		return EVValue{}, 0, err
	}
	return ExpandEV(c.fmts[n.fmtID].widths, fields, e.Val)
}

// QueryEVProfile is mrc_ctl_query_ev_profile.
func (c *Controller) QueryEVProfile(id uint64, a *EVProfileAttr, mask EVProfileAttrMask) error {
	p := c.evs[id]
	if p == nil {
		return ctlErr(EINVAL, "EV profile %d does not exist", id)
	}
	if mask&EVAttrEVOp != 0 && mask&EVAttrFieldsOp != 0 {
		return ctlErr(EINVAL, "EV profile %d: EV_OP and EV_FIELDS_OP together", id)
	}
	a.State, a.CurState, a.Mode, a.FmtProfileID = p.state, p.state, p.mode, p.fmtID
	a.Count, a.MinActive, a.EventMask, a.VendorCfg = p.count, p.minActive, p.eventMask, p.vendor
	if mask&EVAttrFieldsOp != 0 {
		if a.FieldsOp != FieldsQuery {
			return ctlErr(EINVAL, "EV profile %d: MODIFY_FIELDS in a query", id)
		}
		a.FieldCount = len(p.fields)
		if len(a.Fields) < len(p.fields) {
			return ctlErr(E2BIG, "EV profile %d: %d fields, room for %d", id, len(p.fields), len(a.Fields))
		}
		a.Fields = a.Fields[:copy(a.Fields, p.fields)]
	}
	if mask&EVAttrEVOp == 0 {
		return nil
	}
	switch a.EVOp {
	case EVOpQueryEVArray:
		a.EntryCount = len(p.evs)
		if len(a.Entries) < len(p.evs) {
			return ctlErr(E2BIG, "EV profile %d: %d EVs, room for %d", id, len(p.evs), len(a.Entries))
		}
		a.Entries = a.Entries[:len(p.evs)]
		for i, e := range p.evs {
			a.Entries[i] = EVOpEntry{EV: e, State: p.st[i]}
		}
	case EVOpQueryEVState:
		for k := range a.Entries {
			i := slices.Index(p.evs, a.Entries[k].EV)
			if i < 0 {
				return ctlErr(ENOENT, "EV profile %d: entry %d: EV not in the profile", id, k)
			}
			a.Entries[k].State = p.st[i]
		}
	default:
		return ctlErr(EINVAL, "EV profile %d: EV_OP %d in a query", id, a.EVOp)
	}
	return nil
}

// SRv6KeyBase is the 32-bit key of an SRv6 profile's first distinct EV;
// the next ones follow (AMB-60). It keeps the UDP source port that carries
// the key in the ephemeral range and never 0.
const SRv6KeyBase = 0xC000

// ProfileEV is one distinct EV of a profile as the data path sees it: the
// 32-bit key that packets carry and feedback reflects, the controller's
// EV, its expansion and its controller state.
type ProfileEV struct {
	Key      uint32
	EV       CtlEV
	Expanded EVValue
	Bits     int // width of the expansion
	State    EVState
}

// ProfileEVs returns the distinct EVs of an EV profile past INIT, in array
// order: copies of one EV are one path (AMB-65). A STEV or UDP EV's key is
// its expansion as a number; an SRv6 EV's expansion is the outer address
// (and SRH segment), and its key is SRv6KeyBase plus its position among
// the distinct EVs (AMB-60).
func (c *Controller) ProfileEVs(id uint64) ([]ProfileEV, error) {
	p := c.evs[id]
	if p == nil || p.state == ProfileInit {
		return nil, ctlErr(EINVAL, "EV profile %d is not configured", id)
	}
	return c.compileEV(id, p)
}

func (c *Controller) compileEV(id uint64, p *evProfileObj) ([]ProfileEV, error) {
	if p.mode == EVModeAuto {
		return c.autoEVs(id), nil
	}
	f := c.fmts[p.fmtID]
	if f == nil {
		return nil, ctlErr(EINVAL, "EV profile %d: EV Format profile %d does not exist", id, p.fmtID)
	}
	var out []ProfileEV
	seen := map[CtlEV]bool{}
	keys := map[uint32]int{}
	for i, e := range p.evs {
		if e.Unpopulated() || seen[e] {
			continue
		}
		seen[e] = true
		x, w, err := c.expand(p, e)
		if err != nil {
			return nil, err
		}
		key := SRv6KeyBase + uint32(len(out))
		if f.mode != EVFmtSRv6 {
			key = binary.BigEndian.Uint32(x[:4]) >> (32 - w)
		}
		if j, dup := keys[key]; dup {
			return nil, ctlErr(EINVAL, "EV profile %d: entries %d and %d expand to the same EV %#x", id, j, i, key)
		}
		keys[key] = i
		out = append(out, ProfileEV{Key: key, EV: e, Expanded: x, Bits: w, State: p.st[i]})
	}
	if len(out) < 2 {
		return nil, ctlErr(EINVAL, "EV profile %d: %d distinct EVs, a QP needs at least 2", id, len(out))
	}
	return out, nil
}

// autoEVs is AUTO mode: the reference device picks 16 EVs per port itself,
// as GenerateEVProfile does (AMB-66).
func (c *Controller) autoEVs(id uint64) []ProfileEV {
	ports := c.phyPorts()
	var out []ProfileEV
	g := GenerateEVProfile(id, int(ports[len(ports)-1]), 16, id)
	for _, e := range g.EVs {
		if c.dev.PhyPortMask&(1<<e.Port) == 0 {
			continue
		}
		out = append(out, ProfileEV{Key: e.Value, EV: CtlEV{Val: EVValueOf(e.Value, 32), Port: e.Port},
			Expanded: EVValueOf(e.Value, 32), Bits: 32, State: EVGood})
	}
	return out
}

// EVProfile returns the ONLINE EV profile id as the data path takes it
// (the Config.EVProfiles entry a Node is built from), with the keys of
// ProfileEVs as EV values, and each EV's controller state alongside.
func (c *Controller) EVProfile(id uint64) (EVProfile, []EVState, error) {
	p := c.evs[id]
	if p == nil || p.state != ProfileOnline {
		return EVProfile{}, nil, ctlErr(EINVAL, "EV profile %d is not ONLINE", id)
	}
	return c.evProfileOf(id, p)
}

// evProfileOf compiles p, EV profile id, as EVProfile returns it.
func (c *Controller) evProfileOf(id uint64, p *evProfileObj) (EVProfile, []EVState, error) {
	evs, err := c.compileEV(id, p)
	if err != nil {
		return EVProfile{}, nil, err
	}
	out := EVProfile{ID: id, MinActive: min(int(p.minActive), len(evs)), EventMask: p.eventMask}
	st := make([]EVState, len(evs))
	srv6 := p.mode != EVModeAuto && c.fmts[p.fmtID].mode == EVFmtSRv6
	for i, e := range evs {
		out.EVs = append(out.EVs, EVEntry{Value: e.Key, Port: e.EV.Port})
		st[i] = e.State
		if srv6 {
			var sp SRv6Path
			copy(sp.Addr[:], e.Expanded[:16])
			if e.Bits > 128 {
				copy(sp.Segment[:], e.Expanded[16:])
				sp.HasSegment = true
			}
			out.SRv6 = append(out.SRv6, sp)
		}
	}
	return out, st, nil
}

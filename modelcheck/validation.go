package modelcheck

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/openmrc/mrc/spec"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Configuration and attribute validation. Before it explores, the
// rejection check (CheckRejections) takes the configuration's own valid
// QP configuration and attribute set, spoils one field at a time, and
// requires creation or bring-up to fail with a typed error naming that
// field: a *statemachine.ConfigError with that Field, or a
// *statemachine.AttrError with that attribute (QP-ATTR-1, QP-ATTR-4,
// QP-ST-7, QP-ST-8, QP-ST-9, WIRE-BTH-8, WIRE-EV-3, EV-SET-6).

type badConfig struct {
	field string // ConfigError.Field, or its prefix when it ends in "."
	spoil func(c *sm.Config, q *sm.QPConfig)
}

var badConfigs = []badConfig{
	{"ProtocolVersion", func(_ *sm.Config, q *sm.QPConfig) { q.ProtocolVersion = 2 }},
	{"ProtocolVersion", func(_ *sm.Config, q *sm.QPConfig) { q.ProtocolVersion = 3 }},
	{"Profile", func(c *sm.Config, _ *sm.QPConfig) { p := spec.DefaultProfile(); p.UDPDstPort = 0; c.Profile = &p }},
	{"MaxSendWR", func(_ *sm.Config, q *sm.QPConfig) { q.MaxSendWR = -1 }},
	{"MaxRecvWR", func(_ *sm.Config, q *sm.QPConfig) { q.MaxRecvWR = 1 << 16 }},
	{"Device.MPRResolution", func(c *sm.Config, _ *sm.QPConfig) { c.Device.MPRResolution = 300 }},
	{"Device.MaxWIMM/MaxWIMMDest", func(c *sm.Config, _ *sm.QPConfig) { c.Device.MaxWIMM = 1 << 17 }},
	{"Device.MaxMPR", func(c *sm.Config, _ *sm.QPConfig) { c.Device.MaxMPR = 300 }},
	{"Test.MPRUnit", func(c *sm.Config, _ *sm.QPConfig) { c.Test.MPRUnit = 200 }},
	{"Policy.ReorderThreshold", func(c *sm.Config, _ *sm.QPConfig) { c.Policy.ReorderThreshold = -1 }},
	{"Policy.Ack", func(c *sm.Config, _ *sm.QPConfig) { c.Policy.Ack.Delay = -1 }},
	{"MRs[0]", func(c *sm.Config, _ *sm.QPConfig) { c.MRs = []sm.MemoryRegion{{RKey: 1, VA: 1 << 63, Len: 1 << 63}} }},
	{"EVProfiles/CCProfiles", func(c *sm.Config, _ *sm.QPConfig) { c.EVProfiles = nil }},
	{"EVProfiles[id=1].EVs", func(c *sm.Config, _ *sm.QPConfig) { c.EVProfiles[0].EVs = c.EVProfiles[0].EVs[:1] }},
	{"EVProfiles[id=1].EVs", func(c *sm.Config, _ *sm.QPConfig) { c.EVProfiles[0].EVs[0].Port = 0 }},
	{"EVProfiles[id=1].EVs", func(c *sm.Config, _ *sm.QPConfig) {
		c.EVProfiles[0].EVs[1].Value = c.EVProfiles[0].EVs[0].Value
	}},
	{"EVProfiles[id=1].MinActive", func(c *sm.Config, _ *sm.QPConfig) { c.EVProfiles[0].MinActive = -1 }},
	{"EVProfiles[id=1].ProbeInterval", func(c *sm.Config, _ *sm.QPConfig) { c.EVProfiles[0].ProbeInterval = -1 }},
	{"EVProfiles[id=1].ProbeSuccesses", func(c *sm.Config, _ *sm.QPConfig) { c.EVProfiles[0].ProbeSuccesses = 9 }},
	{"EVProfiles[id=1].EventMask", func(c *sm.Config, _ *sm.QPConfig) { c.EVProfiles[0].EventMask = 0x40 }},
	{"CCProfiles[id=1].Algorithm", func(c *sm.Config, _ *sm.QPConfig) { c.CCProfiles[0].Algorithm = "cubic" }},
	{"CCProfiles[id=1].NSCC.Gamma", func(c *sm.Config, _ *sm.QPConfig) {
		c.CCProfiles[0] = sm.CCProfile{ID: 1, Algorithm: sm.CCAlgNSCC, NSCC: sm.DefaultNSCC()}
		c.CCProfiles[0].NSCC.Gamma = 2
	}},
	{"CCProfiles[id=1].NSCC", func(c *sm.Config, _ *sm.QPConfig) {
		c.CCProfiles[0] = sm.CCProfile{ID: 1, Algorithm: sm.CCAlgNSCC, NSCC: sm.DefaultNSCC()}
		c.CCProfiles[0].NSCC.BaseRTT = 0
	}},
	{"QPN", func(_ *sm.Config, q *sm.QPConfig) { q.QPN = wire.EndpointQPN }},
	{"Addr", func(_ *sm.Config, q *sm.QPConfig) { q.Addr.DstIP = netip.Addr{} }},
	{"Addr", func(_ *sm.Config, q *sm.QPConfig) { q.Addr.DstIP = netip.MustParseAddr("fd00::2") }},
	{"Addr.EVMode", func(_ *sm.Config, q *sm.QPConfig) { q.Addr.EVMode = 9 }},
	{"Addr.SGIDIndex", func(_ *sm.Config, q *sm.QPConfig) { q.Addr.SGIDIndex = 0 }}, // a RoCEv1 GID
	{"Addr.SGIDIndex", func(_ *sm.Config, q *sm.QPConfig) { q.Addr.SGIDIndex = 5 }},
	{"Addr.SrcIP", func(_ *sm.Config, q *sm.QPConfig) { q.Addr.SrcIP = netip.MustParseAddr("10.9.9.9") }},
	{"EVProfiles[id=1]", func(c *sm.Config, _ *sm.QPConfig) { c.EVProfiles[0].EVs[0].Value = 1 << 20 }},
}

type badAttr struct {
	to   sm.QPState
	attr string // AttrError.Attr's name
	// class is the error the AttrError wraps.
	class error
	spoil func(a *sm.Attr, m *sm.AttrMask)
}

var badAttrs = []badAttr{
	{sm.StateInit, "EV_PROFILE_ID", sm.ErrUnknownProfile, func(a *sm.Attr, _ *sm.AttrMask) { a.EVProfileID = 99 }},
	{sm.StateInit, "CC_PROFILE_ID", sm.ErrUnknownProfile, func(a *sm.Attr, _ *sm.AttrMask) { a.CCProfileID = 99 }},
	{sm.StateInit, "EV_PROFILE_ID", sm.ErrMissingAttr, func(_ *sm.Attr, m *sm.AttrMask) { *m &^= sm.AttrEVProfileID }},
	{sm.StateInit, "PATH_MTU", sm.ErrInvalidAttr, func(_ *sm.Attr, m *sm.AttrMask) { *m |= sm.AttrPathMTU }},
	{sm.StateInit, "IBV_QP_PORT", sm.ErrInvalidAttr, func(_ *sm.Attr, m *sm.AttrMask) { *m |= sm.AttrVerbsPort }},
	{sm.StateRTR, "PATH_MTU", sm.ErrInvalidAttr, func(a *sm.Attr, _ *sm.AttrMask) { a.PathMTU = 300 }},
	{sm.StateRTR, "MPR_DEST", sm.ErrInvalidAttr, func(a *sm.Attr, _ *sm.AttrMask) { a.MPRDest = 0 }},
	{sm.StateRTR, "MAX_WIMM_DEST", sm.ErrInvalidAttr, func(a *sm.Attr, _ *sm.AttrMask) { a.MaxWIMMDest = 0 }},
	{sm.StateRTR, "CAP", sm.ErrInvalidAttr, func(a *sm.Attr, _ *sm.AttrMask) { a.Cap = 0x10 }},
	{sm.StateRTR, "DEST_QPN", sm.ErrInvalidAttr, func(a *sm.Attr, _ *sm.AttrMask) { a.DestQPN = 1 }},
	{sm.StateRTR, "RQ_PSN", sm.ErrInvalidAttr, func(a *sm.Attr, _ *sm.AttrMask) { a.RQPSN = 1 << 24 }},
	{sm.StateRTR, "IBV_QP_TIMEOUT", sm.ErrInvalidAttr, func(_ *sm.Attr, m *sm.AttrMask) { *m |= sm.AttrVerbsTimeout }},
	{sm.StateRTS, "MPR", sm.ErrInvalidAttr, func(a *sm.Attr, _ *sm.AttrMask) { a.MPR = 0 }},
	{sm.StateRTS, "MAX_WIMM", sm.ErrInvalidAttr, func(a *sm.Attr, _ *sm.AttrMask) { a.MaxWIMM = 0 }},
	{sm.StateRTS, "TIMEOUT", sm.ErrInvalidAttr, func(a *sm.Attr, _ *sm.AttrMask) { a.Timeout = 40 }},
	{sm.StateRTS, "RETRY_CNT", sm.ErrInvalidAttr, func(a *sm.Attr, _ *sm.AttrMask) { a.Retry.LinearCnt = 9 }},
	{sm.StateRTS, "SQ_PSN", sm.ErrInvalidAttr, func(a *sm.Attr, _ *sm.AttrMask) { a.SQPSN = 1 << 24 }},
	{sm.StateRTS, "SQ_PSN", sm.ErrMissingAttr, func(_ *sm.Attr, m *sm.AttrMask) { *m &^= sm.AttrSQPSN }},
}

// checkValidation runs badConfigs and badAttrs against QP s's valid
// configuration; it returns what was accepted or refused unclearly.
func (c *Config) checkValidation(s int) []string {
	var fails []string
	fail := func(format string, args ...any) { fails = append(fails, fmt.Sprintf(format, args...)) }
	for i, b := range badConfigs {
		cfg, qc := c.smConfig(s)
		cfg.EVProfiles = cloneProfiles(cfg.EVProfiles)
		cfg.CCProfiles = append([]sm.CCProfile(nil), cfg.CCProfiles...)
		b.spoil(&cfg, &qc)
		_, err := sm.New(cfg, qc)
		var ce *sm.ConfigError
		if !errors.As(err, &ce) || ce.Field != b.field || !strings.Contains(err.Error(), b.field) {
			fail("bad configuration %d (%s): %v", i, b.field, err)
		}
	}
	steps := []struct {
		to   sm.QPState
		mask sm.AttrMask
	}{{sm.StateInit, sm.MaskInit}, {sm.StateRTR, sm.MaskRTR}, {sm.StateRTS, sm.MaskRTS}}
	var out sm.Output
	for i, b := range badAttrs {
		q, err := sm.New(c.smConfig(s))
		if err != nil {
			return append(fails, err.Error())
		}
		if err := q.Post(0, sm.WorkRequest{Opcode: sm.OpWrite}, &out); !errors.Is(err, sm.ErrQPState) {
			fail("post in RESET: %v", err)
		}
		if err := q.PostRecv(0, 1, &out); !errors.Is(err, sm.ErrQPState) {
			fail("post_recv in RESET: %v", err)
		}
		if err := q.SetEVState(0, c.evValues()[0], sm.EVDenied, &out); !errors.Is(err, sm.ErrQPState) {
			fail("MODIFY_EV_STATE in RESET: %v", err)
		}
		a := c.attr(s)
		for _, st := range steps {
			m := st.mask
			if st.to == b.to {
				b.spoil(&a, &m)
			}
			err := q.Modify(0, st.to, a, m, &out)
			if st.to != b.to {
				if err != nil {
					fail("bad attribute %d: %s: %v", i, st.to, err)
				}
				continue
			}
			var ae *sm.AttrError
			if !errors.As(err, &ae) || !errors.Is(err, b.class) || !strings.Contains(ae.Attr.String(), b.attr) ||
				!strings.Contains(err.Error(), b.attr) || q.State() == b.to {
				fail("bad attribute %d (%s to %s): %v", i, b.attr, b.to, err)
			}
			break
		}
	}
	return fails
}

func cloneProfiles(ps []sm.EVProfile) []sm.EVProfile {
	out := make([]sm.EVProfile, len(ps))
	for i, p := range ps {
		p.EVs = append([]sm.EVEntry(nil), p.EVs...)
		out[i] = p
	}
	return out
}

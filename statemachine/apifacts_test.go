package statemachine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/spec/api"
	sm "github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// mirror is a Go constant that carries an upstream value.
type mirror struct {
	goName   string // package.Identifier
	goValue  int64
	upstream string // fact name: enum.CONSTANT or DEFINE
	// differs names the AMB entry that keeps the Go value apart from the
	// upstream one on purpose; the test then requires upstream to hold
	// the value the entry was written against (want), so a change upstream
	// reopens the decision.
	differs string
	want    int64
}

func mk[T ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~int](goName string, v T, upstream string) mirror {
	return mirror{goName: goName, goValue: int64(v), upstream: upstream}
}

// mirrors is every Go constant that mirrors an upstream one.
var mirrors = []mirror{
	{goName: "statemachine.AttrMaxWIMM", goValue: int64(sm.AttrMaxWIMM), upstream: "mrc_qp_attr_mask.MRC_QP_MAX_WIMM"},
	{goName: "statemachine.AttrMaxWIMMDest", goValue: int64(sm.AttrMaxWIMMDest), upstream: "mrc_qp_attr_mask.MRC_QP_MAX_WIMM_DEST"},
	{goName: "statemachine.AttrMPR", goValue: int64(sm.AttrMPR), upstream: "mrc_qp_attr_mask.MRC_QP_MPR"},
	{goName: "statemachine.AttrMPRDest", goValue: int64(sm.AttrMPRDest), upstream: "mrc_qp_attr_mask.MRC_QP_MPR_DEST"},
	{goName: "statemachine.AttrTimeout", goValue: int64(sm.AttrTimeout), upstream: "mrc_qp_attr_mask.MRC_QP_TIMEOUT"},
	{goName: "statemachine.AttrEVProfileID", goValue: int64(sm.AttrEVProfileID), upstream: "mrc_qp_attr_mask.MRC_QP_EV_PROFILE_ID"},
	{goName: "statemachine.AttrCCProfileID", goValue: int64(sm.AttrCCProfileID), upstream: "mrc_qp_attr_mask.MRC_QP_CC_PROFILE_ID"},
	{goName: "statemachine.AttrQPHint", goValue: int64(sm.AttrQPHint), upstream: "mrc_qp_attr_mask.MRC_QP_HINT"},
	{goName: "statemachine.AttrRetryCnt", goValue: int64(sm.AttrRetryCnt), upstream: "mrc_qp_attr_mask.MRC_QP_RETRY_CNT"},
	{goName: "statemachine.AttrCap", goValue: int64(sm.AttrCap), upstream: "mrc_qp_attr_mask.MRC_QP_CAP"},
	{goName: "statemachine.AttrVendorCfg", goValue: int64(sm.AttrVendorCfg), upstream: "mrc_qp_attr_mask.MRC_QP_VENDOR_CFG"},
	{goName: "statemachine.CapTrimNACKDestUnsupported", goValue: int64(sm.CapTrimNACKDestUnsupported), upstream: "mrc_qp_cap.MRC_QP_CAP_TRIM_NACK_DEST_UNSUPPORTED"},
	{goName: "statemachine.CapDynamicMPR", goValue: int64(sm.CapDynamicMPR), upstream: "mrc_qp_cap.MRC_QP_CAP_DYNAMIC_MPR"},
	{goName: "statemachine.CapSvcTimeDestUnsupported", goValue: int64(sm.CapSvcTimeDestUnsupported), upstream: "mrc_qp_cap.MRC_QP_CAP_SVC_TIME_DEST_UNSUPPORTED"},
	{goName: "statemachine.EVEventGood", goValue: int64(sm.EVEventGood), upstream: "mrc_ctl_ev_state.MRC_CTL_EV_GOOD"},
	{goName: "statemachine.EVEventAssumedBad", goValue: int64(sm.EVEventAssumedBad), upstream: "mrc_ctl_ev_state.MRC_CTL_EV_ASSUMED_BAD"},
	{goName: "statemachine.EVEventDenied", goValue: int64(sm.EVEventDenied), upstream: "mrc_ctl_ev_state.MRC_CTL_EV_DENIED"},
	{goName: "statemachine.ProtocolVersion1", goValue: int64(sm.ProtocolVersion1), upstream: "mrc_protocol_version.MRC_PROTOCOL_VERSION_1"},
	mk("statemachine.CtlProtocolVersion1", sm.CtlProtocolVersion1, "mrc_ctl_protocol_version.MRC_CTL_PROTOCOL_VERSION_1"),
	mk("statemachine.VendorCfgSize", sm.VendorCfgSize, "MRC_CTL_MAX_VENDOR_CFG_SIZE"),
	mk("statemachine.EVBytes", sm.EVBytes, "MRC_CTL_EV_MAX_BYTES"),
	mk("statemachine.DevCapTrimNACK", sm.DevCapTrimNACK, "mrc_device_cap.MRC_DEVICE_CAP_TRIM_NACK"),
	mk("statemachine.DevCapDynamicMPR", sm.DevCapDynamicMPR, "mrc_device_cap.MRC_DEVICE_CAP_DYNAMIC_MPR"),
	mk("statemachine.DevCapSvcTime", sm.DevCapSvcTime, "mrc_device_cap.MRC_DEVICE_CAP_SVC_TIME"),
	mk("statemachine.HintNumQPsPerPeer", sm.HintNumQPsPerPeer, "mrc_qp_hint_attr_mask.MRC_QP_HINT_NUM_QPS_PER_PEER"),
	mk("statemachine.HintNumSendPeers", sm.HintNumSendPeers, "mrc_qp_hint_attr_mask.MRC_QP_HINT_NUM_SEND_PEERS"),
	mk("statemachine.HintNumRemoteRecvPeers", sm.HintNumRemoteRecvPeers, "mrc_qp_hint_attr_mask.MRC_QP_HINT_NUM_REMOTE_RECV_PEERS"),
	mk("statemachine.HintVendorCfg", sm.HintVendorCfg, "mrc_qp_hint_attr_mask.MRC_QP_HINT_VENDOR_CFG"),
	mk("statemachine.MRCVersions.Current", sm.MRCVersions.Current, "MRC_API_CURRENT_VERSION"),
	mk("statemachine.MRCVersions.LastSupported", sm.MRCVersions.LastSupported, "MRC_API_LAST_SUPPORTED_VERSION"),
	mk("statemachine.MRCVersions.Vendor", sm.MRCVersions.Vendor, "MRC_VENDOR_API_CURRENT_VERSION"),
	mk("statemachine.MRCVersions.LastSupportedVendor", sm.MRCVersions.LastSupportedVendor, "MRC_VENDOR_API_LAST_SUPPORTED_VERSION"),
	mk("statemachine.CtlVersions.Current", sm.CtlVersions.Current, "MRC_CTL_API_CURRENT_VERSION"),
	mk("statemachine.CtlVersions.LastSupported", sm.CtlVersions.LastSupported, "MRC_CTL_API_LAST_SUPPORTED_VERSION"),
	mk("statemachine.CtlVersions.Vendor", sm.CtlVersions.Vendor, "MRC_CTL_VENDOR_API_CURRENT_VERSION"),
	mk("statemachine.CtlVersions.LastSupportedVendor", sm.CtlVersions.LastSupportedVendor, "MRC_CTL_VENDOR_API_LAST_SUPPORTED_VERSION"),
	mk("statemachine.ProfileInit", sm.ProfileInit, "mrc_ctl_profile_state.MRC_CTL_PROFILE_INIT"),
	mk("statemachine.ProfileOffline", sm.ProfileOffline, "mrc_ctl_profile_state.MRC_CTL_PROFILE_OFFLINE"),
	mk("statemachine.ProfileOnline", sm.ProfileOnline, "mrc_ctl_profile_state.MRC_CTL_PROFILE_ONLINE"),
	mk("statemachine.OptEVProfileModifyOnline", sm.OptEVProfileModifyOnline, "mrc_ctl_attr_opt.MRC_CTL_OPT_CAP_EV_PROFILE_MODIFY_ONLINE"),
	mk("statemachine.OptCCProfileModifyOnline", sm.OptCCProfileModifyOnline, "mrc_ctl_attr_opt.MRC_CTL_OPT_CAP_CC_PROFILE_MODIFY_ONLINE"),
	mk("statemachine.OptEVEvent", sm.OptEVEvent, "mrc_ctl_attr_opt.MRC_CTL_OPT_CAP_EV_EVENT"),
	mk("statemachine.OptEVExplicitRange", sm.OptEVExplicitRange, "mrc_ctl_attr_opt.MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE"),
	mk("statemachine.OptEVEventPreciseDropCnt", sm.OptEVEventPreciseDropCnt, "mrc_ctl_attr_opt.MRC_CTL_OPT_CAP_EV_EVENT_PRECISE_DROP_CNT"),
	mk("statemachine.OptEPOpEVProbe", sm.OptEPOpEVProbe, "mrc_ctl_attr_opt.MRC_CTL_OPT_CAP_EP_OP_EV_PROBE"),
	mk("statemachine.EVFmtSTEV", sm.EVFmtSTEV, "mrc_ctl_ev_fmt_mode.MRC_CTL_EV_FMT_MODE_STEV"),
	mk("statemachine.EVFmtSRv6", sm.EVFmtSRv6, "mrc_ctl_ev_fmt_mode.MRC_CTL_EV_FMT_MODE_SRV6"),
	mk("statemachine.EVFmtUDP", sm.EVFmtUDP, "mrc_ctl_ev_fmt_mode.MRC_CTL_EV_FMT_MODE_UDP"),
	mk("statemachine.EVModeAuto", sm.EVModeAuto, "mrc_ctl_ev_mode.MRC_CTL_EV_MODE_AUTO"),
	mk("statemachine.EVModeExplicit", sm.EVModeExplicit, "mrc_ctl_ev_mode.MRC_CTL_EV_MODE_EXP"),
	mk("statemachine.EVModeGenerated", sm.EVModeGenerated, "mrc_ctl_ev_mode.MRC_CTL_EV_MODE_GEN"),
	mk("statemachine.CCAttrState", sm.CCAttrState, "mrc_ctl_cc_profile_attr_mask.MRC_CTL_CC_PROFILE_STATE"),
	mk("statemachine.CCAttrCurState", sm.CCAttrCurState, "mrc_ctl_cc_profile_attr_mask.MRC_CTL_CC_PROFILE_CUR_STATE"),
	mk("statemachine.CCAttrAlgorithm", sm.CCAttrAlgorithm, "mrc_ctl_cc_profile_attr_mask.MRC_CTL_CC_PROFILE_ALGORITHM"),
	mk("statemachine.CCAttrConfig", sm.CCAttrConfig, "mrc_ctl_cc_profile_attr_mask.MRC_CTL_CC_PROFILE_CONFIG"),
	mk("statemachine.CCAttrVendorCfg", sm.CCAttrVendorCfg, "mrc_ctl_cc_profile_attr_mask.MRC_CTL_CC_PROFILE_VENDOR_CFG"),
	mk("statemachine.EVAttrState", sm.EVAttrState, "mrc_ctl_ev_profile_attr_mask.MRC_CTL_EV_PROFILE_STATE"),
	mk("statemachine.EVAttrCurState", sm.EVAttrCurState, "mrc_ctl_ev_profile_attr_mask.MRC_CTL_EV_PROFILE_CUR_STATE"),
	mk("statemachine.EVAttrMode", sm.EVAttrMode, "mrc_ctl_ev_profile_attr_mask.MRC_CTL_EV_PROFILE_MODE"),
	mk("statemachine.EVAttrFmtID", sm.EVAttrFmtID, "mrc_ctl_ev_profile_attr_mask.MRC_CTL_EV_PROFILE_FMT_ID"),
	mk("statemachine.EVAttrCount", sm.EVAttrCount, "mrc_ctl_ev_profile_attr_mask.MRC_CTL_EV_PROFILE_COUNT"),
	mk("statemachine.EVAttrMinActive", sm.EVAttrMinActive, "mrc_ctl_ev_profile_attr_mask.MRC_CTL_EV_PROFILE_MIN_ACTIVE"),
	mk("statemachine.EVAttrEventMask", sm.EVAttrEventMask, "mrc_ctl_ev_profile_attr_mask.MRC_CTL_EV_PROFILE_EVENT_MASK"),
	mk("statemachine.EVAttrEVOp", sm.EVAttrEVOp, "mrc_ctl_ev_profile_attr_mask.MRC_CTL_EV_PROFILE_EV_OP"),
	mk("statemachine.EVAttrFieldsOp", sm.EVAttrFieldsOp, "mrc_ctl_ev_profile_attr_mask.MRC_CTL_EV_PROFILE_EV_FIELDS_OP"),
	mk("statemachine.EVAttrVendorCfg", sm.EVAttrVendorCfg, "mrc_ctl_ev_profile_attr_mask.MRC_CTL_EV_PROFILE_VENDOR_CFG"),
	mk("statemachine.EVOpReplaceEV", sm.EVOpReplaceEV, "mrc_ctl_ev_op.MRC_CTL_EV_OP_REPLACE_EV"),
	mk("statemachine.EVOpModifyEVState", sm.EVOpModifyEVState, "mrc_ctl_ev_op.MRC_CTL_EV_OP_MODIFY_EV_STATE"),
	mk("statemachine.EVOpQueryEVState", sm.EVOpQueryEVState, "mrc_ctl_ev_op.MRC_CTL_EV_OP_QUERY_EV_STATE"),
	mk("statemachine.EVOpQueryEVArray", sm.EVOpQueryEVArray, "mrc_ctl_ev_op.MRC_CTL_EV_OP_QUERY_EV_ARRAY"),
	mk("statemachine.EVOpAllCopies", sm.EVOpAllCopies, "mrc_ctl_ev_op_flags.MRC_CTL_EV_OP_F_ALL_COPIES"),
	mk("statemachine.EVFmtAttrState", sm.EVFmtAttrState, "mrc_ctl_ev_fmt_profile_attr_mask.MRC_CTL_EV_FMT_PROFILE_STATE"),
	mk("statemachine.EVFmtAttrCurState", sm.EVFmtAttrCurState, "mrc_ctl_ev_fmt_profile_attr_mask.MRC_CTL_EV_FMT_PROFILE_CUR_STATE"),
	mk("statemachine.EVFmtAttrMode", sm.EVFmtAttrMode, "mrc_ctl_ev_fmt_profile_attr_mask.MRC_CTL_EV_FMT_PROFILE_MODE"),
	mk("statemachine.EVFmtAttrOp", sm.EVFmtAttrOp, "mrc_ctl_ev_fmt_profile_attr_mask.MRC_CTL_EV_FMT_PROFILE_OP"),
	mk("statemachine.EVFmtAttrVendorCfg", sm.EVFmtAttrVendorCfg, "mrc_ctl_ev_fmt_profile_attr_mask.MRC_CTL_EV_FMT_VENDOR_CFG"),
	mk("statemachine.FieldsModify", sm.FieldsModify, "mrc_ctl_ev_fmt_op.MRC_CTL_EV_FMT_OP_MODIFY_FIELDS"),
	mk("statemachine.FieldsQuery", sm.FieldsQuery, "mrc_ctl_ev_fmt_op.MRC_CTL_EV_FMT_OP_QUERY_FIELDS"),
	mk("statemachine.FieldsModify", sm.FieldsModify, "mrc_ctl_ev_fields_op.MRC_CTL_EV_FIELDS_OP_MODIFY_FIELDS"),
	mk("statemachine.FieldsQuery", sm.FieldsQuery, "mrc_ctl_ev_fields_op.MRC_CTL_EV_FIELDS_OP_QUERY_FIELDS"),
	// ERTH op numbering follows the emulator's wire values, not the API
	// enum's order (AMB-25).
	{goName: "wire.EPEVProbe", goValue: int64(wire.EPEVProbe), upstream: "mrc_ctl_ep_op_type.MRC_CTL_EP_OP_EV_PROBE", differs: "AMB-25", want: 0},
	{goName: "wire.EPPortStatusUpdate", goValue: int64(wire.EPPortStatusUpdate), upstream: "mrc_ctl_ep_op_type.MRC_CTL_EP_OP_PORT_STATUS_UPDATE", differs: "AMB-25", want: 1},
}

// The tests below hold this project's Go constants to the pinned facts of
// the OCP MRC API headers (spec/api). They live here, above wire and
// statemachine in the data flow, because spec/api may not import them.

// TestMirrorsEqualPinnedFacts: every Go constant that mirrors an upstream
// enum value or define equals it at the pinned commit (or, for a value
// kept apart on purpose, upstream still holds what the AMB entry assumed).
func TestMirrorsEqualPinnedFacts(t *testing.T) {
	tab := pinned(t)
	for _, m := range mirrors {
		v, ok := tab.Const(m.upstream)
		switch {
		case !ok:
			t.Errorf("%s mirrors %s, which is not in the facts table of %s", m.goName, m.upstream, tab.Commit[:7])
		case m.differs != "":
			if _, ok := spec.LookupAmbiguity(m.differs); !ok {
				t.Errorf("%s: %s is not in the register", m.goName, m.differs)
			}
			if v != m.want {
				t.Errorf("%s = %d upstream at %s; %s was decided for %d: revisit it", m.upstream, v, tab.Commit[:7], m.differs, m.want)
			}
		case v != m.goValue:
			t.Errorf("%s = %#x, but %s = %#x at %s", m.goName, m.goValue, m.upstream, v, tab.Commit[:7])
		}
	}
}

// TestMirrorsComplete: a Go constant whose comment names an upstream
// enum constant or define is in mirrors, so the equality check reaches it.
func TestMirrorsComplete(t *testing.T) {
	root := moduleRoot(t)
	for _, dir := range []string{"statemachine", "wire", "control", "peer"} {
		for _, miss := range unmirrored(t, filepath.Join(root, dir), dir) {
			t.Error(miss)
		}
	}
}

// TestMirrorsCompleteCatchesPlanted: a constant annotated with an upstream
// name and missing from mirrors is reported.
func TestMirrorsCompleteCatchesPlanted(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\nconst (\n\tA = 16 // MRC_QP_TIMEOUT\n\tB = 1 // not upstream\n)\n\n" +
		"// E is enum mrc_qp_cap.\ntype E uint8\n\nconst (\n\tC E = 1 << iota\n\tD\n)\n\nconst F uint8 = 2\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := unmirrored(t, dir, "p")
	if len(got) != 3 || !strings.Contains(got[0], "p.A ") || !strings.Contains(got[1], "p.C ") || !strings.Contains(got[2], "p.D ") {
		t.Errorf("unmirrored = %v, want p.A, p.C and p.D", got)
	}
}

// unmirrored lists the constants of dir (package pkg) whose comments name
// an upstream constant but which mirrors lacks.
func unmirrored(t *testing.T, dir, pkg string) []string {
	tab := pinned(t)
	names := map[string]bool{}
	for _, f := range tab.Facts {
		if f.Kind == api.KindConst || f.Kind == api.KindDefine {
			names[f.Leaf()] = true
		}
	}
	have := map[string]bool{}
	for _, m := range mirrors {
		have[m.goName] = true
	}
	word := regexp.MustCompile(`\bMRC_[A-Z0-9_]+\b`)
	var out []string
	for _, c := range annotatedConsts(t, dir) {
		if len(c.enums) > 0 && !have[pkg+"."+c.name] {
			out = append(out, pkg+"."+c.name+" is a constant of a type that is enum "+strings.Join(c.enums, ", ")+" but is not in mirrors")
		}
		for _, m := range mirrors {
			if e, _, _ := strings.Cut(m.upstream, "."); m.goName == pkg+"."+c.name && len(c.enums) > 0 && !slices.Contains(c.enums, e) {
				out = append(out, m.goName+" mirrors "+m.upstream+", not a constant of enum "+strings.Join(c.enums, ", "))
			}
		}
		for _, w := range word.FindAllString(c.comment, -1) {
			if names[w] && !have[pkg+"."+c.name] {
				out = append(out, pkg+"."+c.name+" names "+w+" in its comment but is not in mirrors")
			}
		}
	}
	return out
}

// TestNSCCConfigMirrorsStruct: statemachine.NSCCConfig has one field per
// field of struct mrc_ctl_cc_nscc_cfg, in order, named alike.
func TestNSCCConfigMirrorsStruct(t *testing.T) {
	tab := pinned(t)
	var want []string
	for _, f := range tab.Facts {
		if f.Kind == api.KindField && strings.HasPrefix(f.Name, "mrc_ctl_cc_nscc_cfg.") {
			want = append(want, strings.ReplaceAll(f.Leaf(), "_", ""))
		}
	}
	ty := reflect.TypeFor[sm.NSCCConfig]()
	var got []string
	for i := range ty.NumField() {
		got = append(got, strings.ToLower(ty.Field(i).Name))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("NSCCConfig fields %v, struct mrc_ctl_cc_nscc_cfg %v", got, want)
	}
}

// TestEVModesNameUpstreamModes: each wire.EVMode is one of enum
// mrc_ctl_ev_fmt_mode.
func TestEVModesNameUpstreamModes(t *testing.T) {
	tab := pinned(t)
	for _, m := range []wire.EVMode{wire.EVModeSTEV, wire.EVModeUDP, wire.EVModeSRv6} {
		if _, ok := tab.Const("mrc_ctl_ev_fmt_mode.MRC_CTL_EV_FMT_MODE_" + m.String()); !ok {
			t.Errorf("EV mode %s has no MRC_CTL_EV_FMT_MODE_%s upstream", m, m)
		}
	}
}

type annotated struct {
	name, comment string
	enums         []string // the upstream enums its type "is"
}

// isEnumRE finds the upstream enums a type's doc says it is.
var isEnumRE = regexp.MustCompile(`\bis enum (mrc_\w+)(?: and enum (mrc_\w+))?`)

// annotatedConsts lists the constants of the non-test Go files in dir with
// their doc and line comments.
func annotatedConsts(t *testing.T, dir string) []annotated {
	t.Helper()
	fset := token.NewFileSet()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []annotated
	var files []*ast.File
	enumTypes := map[string][]string{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				doc := ts.Doc.Text()
				if len(g.Specs) == 1 {
					doc += g.Doc.Text()
				}
				for _, m := range isEnumRE.FindAllStringSubmatch(strings.Join(strings.Fields(doc), " "), -1) {
					for _, e := range m[1:] {
						if e != "" {
							enumTypes[ts.Name.Name] = append(enumTypes[ts.Name.Name], e)
						}
					}
				}
			}
		}
		files = append(files, f)
	}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			typ := "" // an implicitly repeated spec keeps the type of the one before
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); ok {
					typ = id.Name
				} else if vs.Type != nil || len(vs.Values) > 0 {
					typ = ""
				}
				c := vs.Doc.Text() + vs.Comment.Text()
				if len(g.Specs) == 1 {
					c += g.Doc.Text()
				}
				for _, n := range vs.Names {
					out = append(out, annotated{n.Name, c, enumTypes[typ]})
				}
			}
		}
	}
	return out
}

func pinned(t *testing.T) *api.Table {
	t.Helper()
	tab, err := api.Pinned()
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, _ := os.Getwd()
	root, err := spec.FindModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

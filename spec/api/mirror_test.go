package api_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
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
	// ERTH op numbering follows the emulator's wire values, not the API
	// enum's order (AMB-25).
	{goName: "wire.EPEVProbe", goValue: int64(wire.EPEVProbe), upstream: "mrc_ctl_ep_op_type.MRC_CTL_EP_OP_EV_PROBE", differs: "AMB-25", want: 0},
	{goName: "wire.EPPortStatusUpdate", goValue: int64(wire.EPPortStatusUpdate), upstream: "mrc_ctl_ep_op_type.MRC_CTL_EP_OP_PORT_STATUS_UPDATE", differs: "AMB-25", want: 1},
}

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
	src := "package p\n\nconst (\n\tA = 16 // MRC_QP_TIMEOUT\n\tB = 1 // not upstream\n)\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := unmirrored(t, dir, "p")
	if len(got) != 1 || !strings.Contains(got[0], "p.A") {
		t.Errorf("unmirrored = %v, want p.A only", got)
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

type annotated struct{ name, comment string }

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
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				c := vs.Doc.Text() + vs.Comment.Text()
				if len(g.Specs) == 1 {
					c += g.Doc.Text()
				}
				for _, n := range vs.Names {
					out = append(out, annotated{n.Name, c})
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

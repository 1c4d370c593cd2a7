package conformance

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/conformance/internal/capgen"
	"github.com/openmrc/mrc/spec"
)

func TestPICSExample(t *testing.T) {
	p := referencePICS(t)
	if !p.Has("trim_nack") || p.Has("srv6") || *p.Parameters.MPR != 1 || p.SHA256() == "" {
		t.Errorf("reference PICS read wrong: %+v", p)
	}
	if p.nodeOf(mustAddr("fd00::a")) != "A" || p.nodeOf(mustAddr("fd00::c")) != "fd00::c" {
		t.Error("node mapping")
	}
	if DefaultPICS().Codec() == nil {
		t.Error("default PICS has no codec")
	}
}

func TestPICSRejects(t *testing.T) {
	base := capgen.PICS
	for _, c := range []struct{ name, doc, field string }{
		{"not JSON", "{", ""},
		{"unknown field", strings.Replace(base, `"ev_mode"`, `"evmode"`, 1), ""},
		{"version", strings.Replace(base, `"pics_version": 1`, `"pics_version": 2`, 1), "pics_version"},
		{"unknown feature", strings.Replace(base, `"tseth"`, `"tseht"`, 1), "features"},
		{"mpr range", strings.Replace(base, `"mpr": 1,`, `"mpr": 0,`, 1), "parameters.mpr"},
		{"timeout range", strings.Replace(base, `"timeout": 8`, `"timeout": 25`, 1), "parameters.timeout"},
		{"path mtu", strings.Replace(base, `"path_mtu": 256`, `"path_mtu": 1000`, 1), "parameters.path_mtu"},
		{"ev mode", strings.Replace(base, `"ev_mode": "stev"`, `"ev_mode": "srv6"`, 1), "ev_mode"},
		{"bad address", strings.Replace(base, `"fd00::b"`, `"fd00::zz"`, 1), "nodes.B"},
		{"address twice", strings.Replace(base, `"fd00::b"`, `"fd00::a"`, 1), "nodes.B"},
		{"timestamps", strings.Replace(base, `"trusted"`, `"sometimes"`, 1), "capture.timestamps"},
		{"location", strings.Replace(base, `"timestamps"`, `"location": "nearby", "timestamps"`, 1), "capture.location"},
		{"unknown case", strings.Replace(base, `"ev_mode"`, `"unsupported_cases": ["MRC-NO-SUCH-001"], "ev_mode"`, 1), "unsupported_cases"},
		{"dut", strings.Replace(base, `"ev_mode"`, `"dut": ["nobody"], "ev_mode"`, 1), "dut"},
		{"trailing", base + "{}", ""},
	} {
		_, err := ParsePICS([]byte(c.doc))
		var pe *PICSError
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want a *PICSError", c.name, err)
			continue
		}
		if pe.Field != c.field {
			t.Errorf("%s: field %q, want %q (%v)", c.name, pe.Field, c.field, err)
		}
	}
}

func TestDeviationsParse(t *testing.T) {
	d, err := LoadDeviations("testdata/example.deviations")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.List) != 2 || d.List[0].Name != "fw12-retry-flag" || !strings.HasPrefix(d.List[0].Reason, "firmware 1.2 omits rtx") {
		t.Fatalf("parsed %+v", d.List)
	}
	active, expired := d.Resolve(testDay)
	if len(active) != 1 || len(expired) != 1 || expired[0].Name != "old-ecn-marking" {
		t.Errorf("active %v, expired %v", active, expired)
	}
	// Valid through its expiry date, expired the day after.
	a, e := d.Resolve(time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC))
	b, f := d.Resolve(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	if len(a) != 1 || len(e) != 1 || len(b) != 0 || len(f) != 2 {
		t.Errorf("expiry boundary: %d/%d then %d/%d", len(a), len(e), len(b), len(f))
	}
	if !d.List[1].Matches("MRC-WIRE-DSCP-002") || d.List[1].Matches("MRC-WIRE-ENC-001") {
		t.Error("prefix matching")
	}
	for _, bad := range []string{
		"onlyname\n",
		"x MRC-LR-RTX-003 2026-13-01 reason\n",
		"x MRC-NO-SUCH-001 2026-12-01 reason\n",
		"x MRC-ZZZ-* 2026-12-01 reason\n",
		"x MRC-LR-RTX-003 2026-12-01 r\nx MRC-LR-RTX-002 2026-12-01 r\n",
		"-bad MRC-LR-RTX-003 2026-12-01 r\n",
		"x MRC-LR-RTX-003,,MRC-LR-RTX-002 2026-12-01 r\n",
	} {
		_, err := ParseDeviations([]byte(bad))
		var de *DeviationError
		if !errors.As(err, &de) || de.Line == 0 {
			t.Errorf("%q: error %v, want a *DeviationError with a line", bad, err)
		}
	}
}

// TestPICSCapturePointNode: capture.points places each point at a node
// the PICS can name: a node of nodes, or an address no node of nodes
// owns (a node the PICS leaves undeclared is named by its address, which
// is kept as the judge writes it). A point placed at a node that is
// neither is a PICS error naming the field, the point and the node (a
// typo would otherwise leave the placement unused, silently).
func TestPICSCapturePointNode(t *testing.T) {
	points := func(s string) string {
		return strings.Replace(capgen.PICS, `"points": {"A": "A", "B": "B"}`, `"points": `+s, 1)
	}
	for _, c := range []struct {
		name, points string
		rx           string   // where rx is placed, when the PICS is good
		bad          []string // the error names these
	}{
		{"declared", `{"tx": "A", "rx": "B"}`, "B", nil},
		{"undeclared address", `{"tx": "A", "rx": "fd00::c"}`, "fd00::c", nil},
		{"undeclared address, another spelling", `{"rx": "FD00:0::C"}`, "fd00::c", nil},
		{"undeclared IPv4-mapped address", `{"rx": "::ffff:10.0.0.3"}`, "10.0.0.3", nil},
		{"undeclared name", `{"tx": "ghost"}`, "", []string{`"tx"`, `"ghost"`, "A, B"}},
		{"declared address", `{"tx": "fd00::a"}`, "", []string{`"tx"`, "fd00::a", "node A"}},
		{"declared address, another spelling", `{"tx": "FD00:0::A"}`, "", []string{`"tx"`, "FD00:0::A", "node A"}},
		{"address with a zone", `{"tx": "fe80::1%eth0"}`, "", []string{`"tx"`, "fe80::1%eth0", "zone"}},
	} {
		p, err := ParsePICS([]byte(points(c.points)))
		var pe *PICSError
		switch {
		case c.bad == nil && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.bad == nil:
			if got := p.Capture.Points["rx"]; got != c.rx {
				t.Errorf("%s: rx placed at %q, want %q", c.name, got, c.rx)
			}
		case !errors.As(err, &pe) || pe.Field != "capture.points":
			t.Errorf("%s: error %v, want a PICS error in capture.points", c.name, err)
		default:
			for _, s := range c.bad {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: error %q does not name %s", c.name, err, s)
				}
			}
		}
	}
}

// TestPICSCapturePointsShared: WithProfile finishes a copy of a PICS,
// which shares capture.points with the original; rewriting an address
// there (fd00:0::C to fd00::c) leaves the original's map as it was, so a
// PICS being judged (read by several goroutines) is never written.
func TestPICSCapturePointsShared(t *testing.T) {
	p := &PICS{Version: PICSVersion, Features: map[string]bool{},
		Capture: CaptureDecl{Points: map[string]string{"rx": "FD00:0::C"}}}
	q, err := p.WithProfile(spec.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	if p.Capture.Points["rx"] != "FD00:0::C" || q.Capture.Points["rx"] != "fd00::c" {
		t.Errorf("original rx %q (want FD00:0::C, untouched), copy rx %q (want fd00::c)", p.Capture.Points["rx"], q.Capture.Points["rx"])
	}
}

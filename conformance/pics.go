package conformance

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// PICSVersion is the PICS format version this package reads.
const PICSVersion = 1

// FeatureDocs names every PICS feature and what declaring it means.
// Cases list the features they need (Case.Features).
var FeatureDocs = map[string]string{
	"trim_nack":    "the responder sends TRIMMED / TRIMMED_LASTHOP NACKs for trimmed packets (MRC_DEVICE_CAP_TRIM_NACK); declared false: the peer has MRC_QP_CAP_TRIM_NACK_DEST_UNSUPPORTED and the requester sends with DSCP_NO_TRIM",
	"dynamic_mpr":  "dynamic MPR is in effect on the QPs of the capture (MRC_QP_CAP_DYNAMIC_MPR on both peers)",
	"tseth":        "the requester includes a TSETH (requester timestamp) in its write packets",
	"srv6":         "the implementation uses the SRv6 EV format (outer IPv6 uSID path)",
	"ipv4":         "the implementation may send over IPv4 (16-bit EVs)",
	"endpoint_ops": "the implementation sends and answers endpoint operations (EV probe, port status update) on QP 0x2",
	"svc_time":     "the implementation reports responder service time (MRC_DEVICE_CAP_SVC_TIME)",
}

// ParameterDocs names every PICS parameter (PIXIT in ISO 9646 terms).
var ParameterDocs = map[string]string{
	"path_mtu":      "the QPs' path MTU in bytes (IBV_QP_PATH_MTU): 256, 512, 1024, 2048 or 4096",
	"mpr":           "the requester's MPR (mpr.mpr), in units of 128 PSNs",
	"mpr_dest":      "the responder's MPR (mpr.mpr_dest), in units of 128 PSNs",
	"max_wimm":      "the requester's WriteIMM limit (wimm.max_wimm)",
	"max_wimm_dest": "the responder's WriteIMM limit (wimm.max_wimm_dest)",
	"timeout":       "the QP attribute MRC_QP_TIMEOUT (base timeout 1.024 µs × 2^timeout), 0 to 24",
	"linear_cnt":    "retry.linear_cnt, 0 to 7",
	"exp_cnt":       "retry.exp_cnt, 0 to 25 (25: unlimited)",
	"base_rtt_ns":   "the CC profile's base_rtt in ns (the hold-off after resource NACKs)",
	"ev_min_active": "the EV profile's ev_min_active (the floor below which EVs are not retired)",
	"pkey":          "the QPs' P_Key (partition key), 0 to 0xFFFF; default 0xFFFF (WIRE-BTH-12). Responders discard data and probes with another P_Key; the responder's own packets reveal it too",
}

// Parameters holds the PICS parameters. A nil field is not declared.
type Parameters struct {
	PathMTU     *int   `json:"path_mtu,omitempty"`
	MPR         *int   `json:"mpr,omitempty"`
	MPRDest     *int   `json:"mpr_dest,omitempty"`
	MaxWIMM     *int   `json:"max_wimm,omitempty"`
	MaxWIMMDest *int   `json:"max_wimm_dest,omitempty"`
	Timeout     *int   `json:"timeout,omitempty"`
	LinearCnt   *int   `json:"linear_cnt,omitempty"`
	ExpCnt      *int   `json:"exp_cnt,omitempty"`
	BaseRTTNs   *int64 `json:"base_rtt_ns,omitempty"`
	EVMinActive *int   `json:"ev_min_active,omitempty"`
	PKey        *int   `json:"pkey,omitempty"`
}

// has reports whether the named parameter is declared.
func (p *Parameters) has(name string) bool {
	switch name {
	case "path_mtu":
		return p.PathMTU != nil
	case "mpr":
		return p.MPR != nil
	case "mpr_dest":
		return p.MPRDest != nil
	case "max_wimm":
		return p.MaxWIMM != nil
	case "max_wimm_dest":
		return p.MaxWIMMDest != nil
	case "timeout":
		return p.Timeout != nil
	case "linear_cnt":
		return p.LinearCnt != nil
	case "exp_cnt":
		return p.ExpCnt != nil
	case "base_rtt_ns":
		return p.BaseRTTNs != nil
	case "ev_min_active":
		return p.EVMinActive != nil
	case "pkey":
		return p.PKey != nil
	}
	return false
}

// Implementation identifies the implementation under test.
type Implementation struct {
	Vendor   string `json:"vendor,omitempty"`
	Model    string `json:"model,omitempty"`
	Version  string `json:"version,omitempty"`
	Firmware string `json:"firmware,omitempty"`
	Driver   string `json:"driver,omitempty"`
}

// CaptureDecl describes how the capture was taken.
type CaptureDecl struct {
	// Points maps a capture point (the part of a pcapng interface name
	// before "/planeN") to the node it is adjacent to. Undeclared points
	// are placed by the judge (see the report's capture notes). The
	// second and later interfaces of one name are named name#2, name#3, …
	// (ifaceTable), and placed by those names.
	Points map[string]string `json:"points,omitempty"`
	// Planes maps a capture interface's name to the fabric plane it
	// carries, for interfaces that Points places at one node together
	// (one port per plane). Undeclared, their planes follow the order of
	// their names.
	Planes map[string]int `json:"planes,omitempty"`
	// Timestamps is "trusted" (the default) or "untrusted"; untrusted
	// timestamps make every timing case INCONCLUSIVE.
	Timestamps string `json:"timestamps,omitempty"`
	// TimerToleranceNs is the slack allowed on every timer bound
	// (default 1000 ns).
	TimerToleranceNs *int64 `json:"timer_tolerance_ns,omitempty"`
	// ReactionTimeNs is how long after a feedback packet is captured the
	// implementation is assumed to know it (default 1000 ns): a packet
	// sent within that time is not held against the feedback.
	ReactionTimeNs *int64 `json:"reaction_time_ns,omitempty"`
	// FromQPStart declares that the capture starts before the first
	// packet of every QP in it, so initial MSN/RQMSN and cumulative
	// counters can be checked.
	FromQPStart bool `json:"from_qp_start,omitempty"`
	// Location says where the capture was taken relative to the nodes
	// judged (see CaptureLocation): "dut", "remote", or empty (a point is
	// at a node only where Points places it there).
	Location CaptureLocation `json:"location,omitempty"`
}

// CaptureLocation says where a capture was taken relative to the device
// under test. At the DUT's own interface, a packet the DUT sent is seen,
// and a packet seen going to it reached it. Anywhere else (a tap on the
// path, the peer's or the tester's side) a packet can be lost between the
// point and the DUT, so a packet not seen there proves nothing: evidence
// that consists of the absence of a packet is INCONCLUSIVE, not FAIL.
type CaptureLocation string

// Capture locations.
const (
	// LocationDeclared (the default) takes a capture point to be at a
	// node only when capture.points places it there.
	LocationDeclared CaptureLocation = ""
	// LocationDUT: every capture point is at the interface of the DUT
	// judged there.
	LocationDUT CaptureLocation = "dut"
	// LocationRemote: no capture point is at a DUT.
	LocationRemote CaptureLocation = "remote"
)

// Valid reports whether l is one of the capture locations.
func (l CaptureLocation) Valid() bool {
	return l == LocationDeclared || l == LocationDUT || l == LocationRemote
}

// PICS is a Protocol Implementation Conformance Statement: what the
// implementation under test declares about itself, plus the parameters
// and capture facts (PIXIT) the judge needs. Its JSON format is
// documented in formats.md.
type PICS struct {
	Version        int            `json:"pics_version"`
	Implementation Implementation `json:"implementation"`
	// Profile is the wire profile; nil means spec.DefaultProfile.
	Profile *spec.Profile `json:"profile,omitempty"`
	// EVMode is "stev" (default), "udp" or "srv6".
	EVMode string `json:"ev_mode,omitempty"`
	// Features maps feature names (FeatureDocs) to whether they are
	// implemented. An absent feature is unknown: cases that need it, or
	// need its absence, are NOT-APPLICABLE, and checks that depend on it
	// accept either behaviour.
	Features map[string]bool `json:"features"`
	// UnsupportedCases are case IDs the implementation declares it does
	// not support; they are reported NOT-SUPPORTED.
	UnsupportedCases []string `json:"unsupported_cases,omitempty"`
	// DUT lists the nodes (names from Nodes, or addresses) that are the
	// implementation under test; behaviour of other nodes is not judged.
	// Empty: every node is judged.
	DUT []string `json:"dut,omitempty"`
	// Nodes groups addresses into named nodes (a NIC with one address
	// per plane is one node).
	Nodes map[string][]string `json:"nodes,omitempty"`
	// QPPairs names the QPs of connections: each entry maps the two
	// nodes of one connection (names from Nodes, or addresses) to their
	// QP numbers, as strings ("0x000101" or "257"). Feedback to another
	// QP than the one the entry pairs with the responder's is misaddressed
	// (RSP-SACK-6, WIRE-SETH-9), whatever the traffic names.
	QPPairs    []map[string]string `json:"qp_pairs,omitempty"`
	Parameters Parameters          `json:"parameters"`
	Capture    CaptureDecl         `json:"capture"`

	sha     string
	file    string
	codec   *wire.Codec
	mode    wire.EVMode
	byAddr  map[netip.Addr]string
	qpPairs [][2]qpEnd
}

// qpEnd is one end of a declared QP pair: a node and its QP number.
type qpEnd struct {
	node string
	qpn  uint32
}

// PICSError reports a bad PICS file: which file, which field, what.
type PICSError struct {
	File  string
	Field string
	Msg   string
}

// Error starts with the file's name when there is one (a command's
// error line then names it once), else with "conformance: PICS".
func (e *PICSError) Error() string {
	f := e.File
	if f == "" {
		f = "conformance: PICS"
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", f, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: %s", f, e.Msg)
}

// readErr is a file-reading error without the file's name, which the
// caller's error carries.
func readErr(err error) string {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// LoadPICS reads and validates a PICS file.
func LoadPICS(name string) (*PICS, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, &PICSError{File: name, Msg: readErr(err)}
	}
	p, err := ParsePICS(b)
	if err != nil {
		if pe, ok := err.(*PICSError); ok {
			pe.File = name
		}
		return nil, err
	}
	p.file = name
	return p, nil
}

// ParsePICS parses and validates a PICS document. Unknown fields, unknown
// features, unknown case IDs and out-of-range parameters are errors.
func ParsePICS(b []byte) (*PICS, error) {
	var p PICS
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, &PICSError{Msg: "invalid JSON: " + err.Error()}
	}
	if dec.More() {
		return nil, &PICSError{Msg: "trailing data after the JSON object"}
	}
	sum := sha256.Sum256(b)
	p.sha = hex.EncodeToString(sum[:])
	if err := p.finish(); err != nil {
		return nil, err
	}
	return &p, nil
}

// WithProfile returns a copy of p whose wire profile is prof (a preset or
// a profile file chosen on the command line), or the error of a profile
// that does not validate.
func (p *PICS) WithProfile(prof spec.Profile) (*PICS, error) {
	q := *p
	q.Profile = &prof
	if err := q.finish(); err != nil {
		return nil, err
	}
	return &q, nil
}

// DefaultPICS is the PICS used when none is given: default profile, no
// optional feature, no parameter. Most behaviour cases are then
// INCONCLUSIVE or NOT-APPLICABLE; it suits a first look at a capture.
func DefaultPICS() *PICS {
	p := &PICS{Version: PICSVersion, Features: map[string]bool{}}
	if err := p.finish(); err != nil {
		panic(err) // the zero PICS is valid; a test keeps it so
	}
	return p
}

func (p *PICS) finish() error {
	bad := picsError
	if p.Version != PICSVersion {
		return bad("pics_version", "%d, this judge reads version %d", p.Version, PICSVersion)
	}
	if p.Features == nil {
		p.Features = map[string]bool{}
	}
	for f := range p.Features {
		if _, ok := FeatureDocs[f]; !ok {
			return bad("features", "unknown feature %q (known: %s)", f, strings.Join(sortedKeys(FeatureDocs), ", "))
		}
	}
	p.codec = wire.Default // the default profile's codec, made once
	if p.Profile != nil {
		c, err := wire.NewCodec(*p.Profile)
		if err != nil {
			return bad("profile", "%v", err)
		}
		p.codec = c
	}
	var err error
	if p.EVMode == "" {
		p.mode = wire.EVModeSTEV
		if p.Has("srv6") {
			p.mode = wire.EVModeSRv6
		}
	} else if p.mode, err = wire.ParseEVMode(p.EVMode); err != nil {
		return bad("ev_mode", "%q (want stev, udp or srv6)", p.EVMode)
	}
	if p.mode == wire.EVModeSRv6 && !p.Has("srv6") {
		return bad("ev_mode", "srv6 needs the srv6 feature declared")
	}
	for _, id := range p.UnsupportedCases {
		if _, ok := LookupCase(id); !ok {
			return bad("unsupported_cases", "unknown case %q", id)
		}
	}
	rng := func(name string, v *int, lo, hi int) error {
		if v != nil && (*v < lo || *v > hi) {
			return bad("parameters."+name, "%d out of range %d..%d", *v, lo, hi)
		}
		return nil
	}
	q := &p.Parameters
	for _, e := range []error{
		rng("mpr", q.MPR, 1, 255), rng("mpr_dest", q.MPRDest, 1, 255),
		rng("max_wimm", q.MaxWIMM, 0, 1<<20), rng("max_wimm_dest", q.MaxWIMMDest, 0, 1<<20),
		rng("timeout", q.Timeout, 0, 24), rng("linear_cnt", q.LinearCnt, 0, 7), rng("exp_cnt", q.ExpCnt, 0, 25),
		rng("ev_min_active", q.EVMinActive, 0, 1<<16), rng("pkey", q.PKey, 0, 0xFFFF),
	} {
		if e != nil {
			return e
		}
	}
	if m := q.PathMTU; m != nil && !slices.Contains([]int{256, 512, 1024, 2048, 4096}, *m) {
		return bad("parameters.path_mtu", "%d (want 256, 512, 1024, 2048 or 4096)", *m)
	}
	if q.BaseRTTNs != nil && *q.BaseRTTNs < 0 {
		return bad("parameters.base_rtt_ns", "negative")
	}
	if err := p.finishCapture(); err != nil {
		return err
	}
	if err := p.finishNodes(); err != nil {
		return err
	}
	if err := p.finishPoints(); err != nil {
		return err
	}
	return p.finishQPPairs()
}

// picsError is a PICSError about one field.
func picsError(field, f string, a ...any) error {
	return &PICSError{Field: field, Msg: fmt.Sprintf(f, a...)}
}

// finishCapture checks the capture section.
func (p *PICS) finishCapture() error {
	bad := picsError
	for _, name := range sortedKeys(p.Capture.Planes) {
		if pl := p.Capture.Planes[name]; pl < 0 || pl > 63 {
			return bad("capture.planes", "%s: plane %d out of range 0..63", name, pl)
		}
		if _, ok := p.Capture.Points[name]; !ok {
			return bad("capture.planes", "%s is not a capture point of capture.points", name)
		}
	}
	switch p.Capture.Timestamps {
	case "", "trusted", "untrusted":
	default:
		return bad("capture.timestamps", "%q (want trusted or untrusted)", p.Capture.Timestamps)
	}
	if !p.Capture.Location.Valid() {
		return bad("capture.location", "%q (want dut or remote)", p.Capture.Location)
	}
	for _, v := range []*int64{p.Capture.TimerToleranceNs, p.Capture.ReactionTimeNs} {
		if v != nil && *v < 0 {
			return bad("capture", "negative tolerance")
		}
	}
	return nil
}

// finishNodes indexes the nodes' addresses and checks the DUT list.
func (p *PICS) finishNodes() error {
	bad := picsError
	p.byAddr = map[netip.Addr]string{}
	for _, name := range sortedKeys(p.Nodes) {
		for _, a := range p.Nodes[name] {
			ad, err := netip.ParseAddr(a)
			if err != nil {
				return bad("nodes."+name, "%q is not an IP address", a)
			}
			ad = ad.Unmap()
			if prev, dup := p.byAddr[ad]; dup {
				return bad("nodes."+name, "address %s already belongs to node %s", a, prev)
			}
			p.byAddr[ad] = name
		}
	}
	for _, d := range p.DUT {
		if _, ok := p.Nodes[d]; ok {
			continue
		}
		if _, err := netip.ParseAddr(d); err != nil {
			return bad("dut", "%q is neither a node name nor an IP address", d)
		}
	}
	return nil
}

// finishPoints checks that capture.points places each point at a node
// the judge can name: a node of nodes, or an address no node of nodes
// owns (the judge names an undeclared node by its address, so the address
// is rewritten as the judge writes it: fd00:0::C becomes fd00::c). Any
// other name matches no node, which would leave the point's placement
// unused without a word (the judge would guess the point's node from the
// traffic). The map is copied before an address is rewritten: WithProfile
// shares it between copies of a PICS.
func (p *PICS) finishPoints() error {
	cloned := false
	for _, pt := range sortedKeys(p.Capture.Points) {
		node := p.Capture.Points[pt]
		if _, ok := p.Nodes[node]; ok {
			continue
		}
		a, err := netip.ParseAddr(node)
		if err == nil && a.Zone() != "" {
			return picsError("capture.points", "point %q is placed at address %s: an address with a zone is no node's address on the wire", pt, node)
		}
		if err != nil {
			return picsError("capture.points", "point %q is placed at node %q, which nodes does not declare (declared: %s; or give an undeclared node's address)", pt, node, cmp.Or(strings.Join(sortedKeys(p.Nodes), ", "), "none"))
		}
		a = a.Unmap()
		if owner, ok := p.byAddr[a]; ok {
			return picsError("capture.points", "point %q is placed at address %s, of node %s: name the node", pt, node, owner)
		}
		if s := a.String(); s != node {
			if !cloned {
				p.Capture.Points, cloned = maps.Clone(p.Capture.Points), true
			}
			p.Capture.Points[pt] = s
		}
	}
	return nil
}

// finishQPPairs checks qp_pairs: two ends a pair, each a node (a name
// from nodes, or an address) with a 24-bit QP number, two nodes apart,
// and no QP in two pairs (a QP is connected to one peer QP).
func (p *PICS) finishQPPairs() error {
	p.qpPairs = nil
	in := map[qpEnd]int{}
	for i, pr := range p.QPPairs {
		field := fmt.Sprintf("qp_pairs[%d]", i)
		if len(pr) != 2 {
			return picsError(field, "names %d nodes, want the two nodes of one connection", len(pr))
		}
		var ends [2]qpEnd
		for k, name := range sortedKeys(pr) {
			node := name
			if _, ok := p.Nodes[name]; !ok {
				a, err := netip.ParseAddr(name)
				if err != nil {
					return picsError(field, "%q is neither a node of nodes nor an IP address", name)
				}
				node = p.nodeOf(a)
			}
			q, err := strconv.ParseUint(pr[name], 0, 64)
			if err != nil || q > 0xFFFFFF {
				return picsError(field, "%s: QP %q is not a 24-bit QP number (write it as \"0x000101\" or \"257\")", name, pr[name])
			}
			ends[k] = qpEnd{node, uint32(q)}
		}
		if ends[0].node == ends[1].node {
			return picsError(field, "both ends are node %s", ends[0].node)
		}
		for _, end := range ends {
			if j, dup := in[end]; dup {
				return picsError(field, "node %s's QP 0x%06x is in qp_pairs[%d] too: a QP has one peer QP", end.node, end.qpn, j)
			}
			in[end] = i
		}
		p.qpPairs = append(p.qpPairs, ends)
	}
	return nil
}

// declaredPeer returns the QP number qp_pairs pairs with node's QP qpn
// (compared in bits 15:0 alone when low16), when it is peer's and only
// one pair matches.
func (p *PICS) declaredPeer(node string, qpn uint32, low16 bool, peer string) (uint32, bool) {
	var found uint32
	n := 0
	for _, pr := range p.qpPairs {
		for i, end := range pr {
			if end.node == node && (end.qpn == qpn || low16 && uint16(end.qpn) == uint16(qpn)) && pr[1-i].node == peer {
				found = pr[1-i].qpn
				n++
			}
		}
	}
	return found, n == 1
}

// Has reports whether the feature is declared implemented.
func (p *PICS) Has(feature string) bool { return p.Features[feature] }

// Declared reports whether the PICS says anything about the feature, and
// what.
func (p *PICS) Declared(feature string) (implemented, declared bool) {
	v, ok := p.Features[feature]
	return v, ok
}

// Codec returns the wire codec of the PICS's profile.
func (p *PICS) Codec() *wire.Codec { return p.codec }

// EVModeValue returns the EV wire format.
func (p *PICS) EVModeValue() wire.EVMode { return p.mode }

// SHA256 returns the hex SHA-256 of the PICS file as read ("" for
// DefaultPICS).
func (p *PICS) SHA256() string { return p.sha }

// File returns the file name the PICS was loaded from.
func (p *PICS) File() string { return p.file }

// applies reports whether the case's feature preconditions hold, and the
// first one that does not.
func (p *PICS) applies(c *Case) (bool, string) {
	for _, f := range c.Features {
		want := !strings.HasPrefix(f, "!")
		name := strings.TrimPrefix(f, "!")
		v, declared := p.Declared(name)
		switch {
		case want && !v:
			return false, "the PICS does not declare feature " + name
		case !want && !declared:
			return false, "the PICS does not declare whether feature " + name + " is implemented (this case needs it declared false)"
		case !want && v:
			return false, "the PICS declares feature " + name + ", which this case excludes"
		}
	}
	return true, ""
}

// preset returns the verdict the PICS alone gives case c, whatever the
// capture shows, and its reason; ok is false when the capture decides it.
func (p *PICS) preset(c *Case) (v Verdict, reason string, ok bool) {
	applies, why := p.applies(c)
	switch miss := p.missing(c); {
	case p.unsupported(c.ID):
		return NotSupported, "the PICS lists this case as unsupported", true
	case !applies:
		return NotApplicable, why, true
	case len(miss) > 0:
		return Inconclusive, "PICS parameter not declared: " + strings.Join(miss, ", "), true
	}
	return 0, "", false
}

// live returns the passive cases the capture decides under the PICS (no
// preset verdict): the engine runs their checks alone (hookSetFor), as
// the report shows no observation of the others.
func (p *PICS) live() caseSet {
	var s caseSet
	for cs := range numCases {
		if _, _, preset := p.preset(&passiveCases[cs]); !preset {
			s.add(cs)
		}
	}
	return s
}

// missing returns the case's parameters the PICS does not declare.
func (p *PICS) missing(c *Case) []string {
	var out []string
	for _, n := range c.Parameters {
		if !p.Parameters.has(n) {
			out = append(out, n)
		}
	}
	return out
}

// unsupported reports whether the PICS lists the case as unsupported.
func (p *PICS) unsupported(id string) bool { return slices.Contains(p.UnsupportedCases, id) }

// nodeOf returns the node name of an address: its PICS node, or the
// address itself.
func (p *PICS) nodeOf(a netip.Addr) string {
	a = a.Unmap()
	if n, ok := p.byAddr[a]; ok {
		return n
	}
	return a.String()
}

// declares reports whether the PICS names the node of address a.
func (p *PICS) declares(a netip.Addr) bool {
	_, ok := p.byAddr[a.Unmap()]
	return ok
}

// isDUT reports whether node is judged.
func (p *PICS) isDUT(node string) bool {
	if len(p.DUT) == 0 {
		return true
	}
	for _, d := range p.DUT {
		if d == node {
			return true
		}
		if a, err := netip.ParseAddr(d); err == nil && p.nodeOf(a) == node {
			return true
		}
	}
	return false
}

// AtNode reports whether capture point point is at node's own interface,
// with the capture location loc (LocationDeclared: the PICS's).
func (p *PICS) AtNode(point, node string, loc CaptureLocation) bool {
	if loc == LocationDeclared {
		loc = p.Capture.Location
	}
	switch loc {
	case LocationDUT:
		return true
	case LocationRemote:
		return false
	}
	return p.Capture.Points[point] == node
}

func (p *PICS) tolerance() int64 {
	if v := p.Capture.TimerToleranceNs; v != nil {
		return *v
	}
	return 1000
}

func (p *PICS) reaction() int64 {
	if v := p.Capture.ReactionTimeNs; v != nil {
		return *v
	}
	return 1000
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

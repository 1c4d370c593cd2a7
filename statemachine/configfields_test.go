package statemachine

import (
	"crypto/sha256"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/wire"
)

// No configuration field is accepted and then ignored. The test walks every
// field of Config and QPConfig (and of the structs and slice elements they
// hold) by reflection, sets it to values other than a base configuration's,
// and runs a small deterministic transfer between two QPs for each: a field
// passes when some value New accepts changes what the run produces (packets,
// encoded bytes, events, completions, memory, errors of later calls). A
// value New refuses is no evidence of use. The run carries both directions
// of traffic with drops, trims, CE marks, delays and timeouts, in two
// base configurations (IPv4 with a GID table, IPv6 over SRv6 paths), so that
// each policy has something to act on.

// fieldsCase is what one run is made from: the Node configuration both QPs
// share and the configuration of QP A (QP B's is fixed).
type fieldsCase struct {
	Node Config
	QP   QPConfig
}

type allowed struct {
	why     string
	refused bool
}

// fieldsAllow lists the fields no run can show in use, each with why. A
// refused entry is a field every value but the base's is refused for: the
// test checks that instead.
var fieldsAllow = map[string]allowed{
	"Node.Profile.Name": {why: "a label: tools print it, no behaviour follows from it"},
	"Node.Profile.AcceptUDPDstPorts": {why: "the ports a receiver's wire.Codec takes as MRC before a QP " +
		"sees a packet; every packet of the run goes to UDPDstPort, which must be among them"},
	"Node.Profile.PortStatus": {why: "how the endpoint agent (EndpointConfig.Profile) announces port " +
		"changes; a QP sends no port status (TestPortStatus* in endpoint_test.go)"},
	"Node.Profile.ERTHOpOrder": {why: "numbers endpoint operations in the ERTH, which only the " +
		"endpoint agent sends; no QP packet carries one"},
	"Node.Policy.KeepAvoidAfterStall": {why: "acts only when a lost PSN's stall timer expires with the EV " +
		"it avoids the only usable one (TestKeepAvoidAfterStallPolicy in requester_test.go)"},
	"Node.Profile.WIMMLimit": {why: "acts only when a peer exceeds max_wimm_dest, which a requester " +
		"keeping its own max_wimm never does (TestWIMMLimit* in responder_test.go)"},
	"QP.ProtocolVersion": {refused: true,
		why: "one protocol version exists (QP-ATTR-4): 0 means it, every other value is refused"},
	"Node.Device.GIDs[0].Type": {refused: true,
		why: "a QP may use only RoCEv2 GIDs (QP-ST-8): the others are refused"},
}

func TestNoConfigFieldIgnored(t *testing.T) {
	for _, e := range ignoredFields([]func() fieldsCase{fieldsBaseV4, fieldsBaseV6}, fieldsAllow, "") {
		t.Error(e)
	}
}

// ignoredFields checks the fields whose path starts with under against the
// base configurations and returns what it finds wrong.
func ignoredFields(bases []func() fieldsCase, allow map[string]allowed, under string) []string {
	var errs []string
	report := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	want := make([]string, len(bases))
	for i, b := range bases {
		fp, err := fieldsRun(b())
		if err != nil {
			report("base %d refused: %v", i, err)
			return errs
		}
		if again, _ := fieldsRun(b()); again != fp {
			report("base %d: two runs differ; the run is not deterministic", i)
			return errs
		}
		want[i] = fp
	}
	seen := map[string]bool{}
	for _, leaf := range configLeaves(reflect.TypeOf(fieldsCase{}), "") {
		seen[leaf.path] = true
		if !strings.HasPrefix(leaf.path, under) {
			continue
		}
		used, accepted, refused, present := false, false, false, false
		for i, b := range bases {
			for k := 0; !used; k++ {
				c := b()
				f, ok := leaf.find(reflect.ValueOf(&c).Elem())
				if !ok {
					break
				}
				present = true
				vals := fieldCandidates(leaf.path, f)
				if k >= len(vals) {
					break
				}
				f.Set(vals[k])
				fp, err := fieldsRun(c)
				if err == nil {
					accepted = true
					used = fp != want[i]
				} else {
					refused = true
				}
			}
		}
		a, listed := allow[leaf.path]
		switch {
		case !present:
			report("%s: no base configuration holds it; give a base one", leaf.path)
		case listed && a.refused && (used || !refused):
			report("%s: listed as refused (%s), but a value changes the run or none was refused", leaf.path, a.why)
		case listed && a.refused:
		case listed && used:
			report("%s: listed as unused (%s), but a value changes the run: remove it from fieldsAllow", leaf.path, a.why)
		case listed:
		case !accepted:
			report("%s: every value tried was refused; add an accepted one to fieldCandidates", leaf.path)
		case !used:
			report("%s: accepted but ignored: no value tried changes the run", leaf.path)
		}
	}
	for p := range allow {
		if !seen[p] {
			report("fieldsAllow lists %s, which is not a field", p)
		}
	}
	return errs
}

// leaf is one settable field, reached from the root by field indices and,
// for slices, element 0.
type leaf struct {
	path  string
	steps [][]int // field index path, then element 0, per level
}

// configLeaves lists the fields of t: structs and slices of structs are
// walked into (element 0), pointers to structs followed; everything else is
// a leaf. netip.Addr and spec enums are leaves.
func configLeaves(t reflect.Type, prefix string) []leaf {
	var out []leaf
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		p := prefix + f.Name
		ft := f.Type
		switch {
		case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct:
			out = append(out, prefixed(leaf{p, [][]int{{i}}}, configLeaves(ft.Elem(), p+"."))...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, prefixed(leaf{p + "[0]", [][]int{{i}, nil}}, configLeaves(ft.Elem(), p+"[0]."))...)
		case ft.Kind() == reflect.Struct && ft != reflect.TypeOf(netip.Addr{}):
			out = append(out, prefixed(leaf{p, [][]int{{i}}}, configLeaves(ft, p+"."))...)
		default:
			out = append(out, leaf{path: p, steps: [][]int{{i}}})
		}
	}
	return out
}

// prefixed puts the steps of parent before each of kids'.
func prefixed(parent leaf, kids []leaf) []leaf {
	for i := range kids {
		kids[i].steps = append(slices.Clone(parent.steps), kids[i].steps...)
	}
	return kids
}

// find reaches the leaf in v; false when a pointer on the way is nil or a
// slice empty.
func (l leaf) find(v reflect.Value) (reflect.Value, bool) {
	for _, s := range l.steps {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return v, false
			}
			v = v.Elem()
		}
		if s == nil {
			if v.Len() == 0 {
				return v, false
			}
			v = v.Index(0)
			continue
		}
		v = v.FieldByIndex(s)
	}
	return v, true
}

// fieldCandidates returns values for f other than its current one, the
// likeliest to be accepted first.
func fieldCandidates(path string, f reflect.Value) []reflect.Value {
	var out []reflect.Value
	add := func(x any) {
		v := reflect.ValueOf(x)
		if v.Type() != f.Type() {
			v = v.Convert(f.Type())
		}
		same := func(w reflect.Value) bool { return reflect.DeepEqual(v.Interface(), w.Interface()) }
		if !same(f) && !slices.ContainsFunc(out, same) {
			out = append(out, v)
		}
	}
	switch t := f.Type(); {
	case t == reflect.TypeOf(netip.Addr{}):
		a := f.Interface().(netip.Addr)
		if a.IsValid() {
			b := a.As16()
			b[15] ^= 0x40
			if a.Is4() {
				add(netip.AddrFrom4([4]byte(b[12:])))
			} else {
				add(netip.AddrFrom16(b))
			}
		}
		add(netip.AddrFrom4([4]byte{10, 0, 0, 9}))
	case t.Kind() == reflect.Bool:
		add(!f.Bool())
	case t.Kind() == reflect.Array:
		v := reflect.New(t).Elem()
		v.Set(f)
		last := v.Index(v.Len() - 1)
		last.SetUint(last.Uint() ^ 0x40)
		out = append(out, v)
	case path == "Node.Profile.UDPDstPort":
		add(4971) // the default profile's other accepted port
	case t.Kind() == reflect.String:
		add(CCAlgNone)
		add(CCAlgNSCC)
		add("x")
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		for _, x := range []float64{f.Float() / 4, f.Float() * 4, 0.1, 0.9, 4, 64, 1024} {
			add(x)
		}
	case t.Kind() == reflect.Slice:
		if f.Len() > 0 {
			add(reflect.Zero(t).Interface())
			add(f.Slice(0, 1).Interface())
		}
	case f.CanInt():
		for _, x := range []int64{f.Int() + 1, f.Int() - 1, f.Int() * 3, 1, 2, 3, 8, 16, 100, 1000, 5000, 1 << 14, 1 << 20, -1} {
			if !f.OverflowInt(x) {
				add(x)
			}
		}
	case f.CanUint():
		for _, x := range []uint64{f.Uint() + 1, f.Uint() - 1, f.Uint() * 3, f.Uint() / 4, 1, 2, 3, 8, 16, 100, 1000, 5000, 1 << 14, 1 << 20, math.MaxUint64} {
			if !f.OverflowUint(x) {
				add(x)
			}
		}
	}
	return out
}

// The base configurations. Each part has something to act on: MPR and
// window limits the transfer reaches, a CC profile with NSCC, ack
// coalescing with a delay, a registered region the writes land in.
func fieldsBaseNode() Config {
	p := spec.DefaultProfile()
	return Config{
		Profile: &p,
		EVProfiles: []EVProfile{{ID: 7, EVs: slices.Clone(testEVs), ActivePerPlane: 1, MinActive: 1,
			ProbeInterval: 20 * Microsecond, ProbeSuccesses: 2, EventMask: 0}},
		CCProfiles: []CCProfile{{ID: 9, Algorithm: CCAlgNSCC, NSCC: DefaultNSCC()}},
		MRs:        []MemoryRegion{{RKey: 1, VA: baseVA, Len: 1 << 20}},
		Policy:     Policy{ReorderThreshold: 3, Ack: AckPolicy{Coalesce: 2, Delay: 3 * Microsecond}},
		Test:       TestKnobs{MPRUnit: 4},
	}
}

func fieldsBaseV4() fieldsCase {
	c := fieldsCase{Node: fieldsBaseNode(), QP: QPConfig{QPN: qpnA, Seed: 5, MaxSendWR: 8, MaxRecvWR: 8,
		Addr: Addressing{SrcMAC: [6]byte{2, 0, 0, 0, 0, 1}, DstMAC: [6]byte{2, 0, 0, 0, 0, 2},
			DstIP: netip.AddrFrom4([4]byte{10, 0, 0, 2}), HopLimit: 9, PKey: 0x8001, EVMode: wire.EVModeUDP}}}
	c.Node.Device.GIDs = []GID{{IP: netip.AddrFrom4([4]byte{10, 0, 0, 1})}, {IP: netip.AddrFrom4([4]byte{10, 0, 0, 2})}}
	return c
}

func fieldsBaseV6() fieldsCase {
	a, b := netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
	c := fieldsCase{Node: fieldsBaseNode(), QP: QPConfig{QPN: qpnA, Seed: 5, Timestamps: true,
		Addr: Addressing{SrcIP: a, DstIP: b}}}
	e := &c.Node.EVProfiles[0]
	for i := range e.EVs {
		e.SRv6 = append(e.SRv6, SRv6Path{Addr: [16]byte{0xfc, 0, 15: byte(i)}, Segment: b.As16(), HasSegment: i%2 == 0})
	}
	return c
}

// fieldsPeer is QP B's configuration: A's address vector mirrored, on a
// Node made from the same Config.
func fieldsPeer(c fieldsCase) QPConfig {
	q := QPConfig{QPN: qpnB, Seed: 6, Timestamps: true, Addr: c.QP.Addr}
	a := &q.Addr
	a.EVMode = wire.EVModeSTEV
	a.SrcMAC, a.DstMAC = a.DstMAC, a.SrcMAC
	a.SrcIP, a.DstIP = a.DstIP, c.QP.Addr.SrcIP
	if len(c.Node.Device.GIDs) > 1 {
		a.SrcIP, a.DstIP, a.SGIDIndex = netip.Addr{}, c.Node.Device.GIDs[0].IP, 1
	}
	return q
}

// fieldsFaults is the run's fabric: it counts data packets both ways and
// drops, trims, CE-marks and delays some, enough for inferred losses,
// timeouts, probes and multiplicative decreases.
func fieldsFaults() func(int, *Outgoing) action {
	k := 0
	return func(from int, og *Outgoing) action {
		if !og.Pkt.BTH.Opcode.IsWrite() {
			return action{}
		}
		k++
		switch {
		case k == 3:
			return action{drop: true}
		case k == 5 || k == 9:
			return action{trim: true, lastHop: k == 9}
		case k >= 6 && k <= 8:
			return action{ce: true}
		case k == 11:
			return action{extra: 50 * Microsecond}
		case k >= 12 && k < 30:
			return action{ce: k%3 != 0, extra: 25 * Microsecond}
		}
		return action{}
	}
}

// fieldsWideEVs returns c with EVs past 16 bits: QP B's, on IPv6, so that
// A reads the EV of what B sends from the flow label too, or not,
// depending on A's EV mode.
func fieldsWideEVs(c Config) Config {
	c.EVProfiles = slices.Clone(c.EVProfiles)
	e := &c.EVProfiles[0]
	e.EVs = slices.Clone(e.EVs)
	for i := range e.EVs {
		e.EVs[i].Value |= 0x30000
	}
	return c
}

// fieldsRun runs the transfer and returns a digest of everything it
// produced, or the error New gave for either QP.
func fieldsRun(c fieldsCase) (string, error) {
	var qps [2]*QP
	for i, qc := range []QPConfig{c.QP, fieldsPeer(c)} {
		nc := c.Node
		if i == 1 && qc.Addr.DstIP.Is6() {
			nc = fieldsWideEVs(nc)
		}
		q, err := New(nc, qc)
		if err != nil {
			return "", err
		}
		qps[i] = q
	}
	h := sha256.New()
	note := func(format string, args ...any) { fmt.Fprintf(h, format+"\n", args...) }
	codec, err := wire.NewCodec(*spec.OrDefault(c.Node.Profile))
	note("codec %v", err)
	s := &sim{t: nil, delay: Microsecond, quiet: true}
	s.out.TracePackets = true
	s.qp = qps
	var buf []byte
	var dec wire.Packet
	s.tap = func(og *Outgoing) {
		note("ev %#x plane %d class %d trimmed %v", og.EV, og.Plane, og.Class, og.Pkt.Trimmed)
		var err error
		if codec == nil {
			buf = fmt.Appendf(buf[:0], "%+v", og.Pkt)
		} else if buf, err = codec.Append(buf[:0], &og.Pkt); err == nil {
			err = codec.Decode(buf, &dec)
		}
		h.Write(buf)
		note("%v", err)
	}
	s.rule = fieldsFaults()
	evq, _ := NewEVEventCQ(64, true)
	s.onOut = func(i int, o *Output) {
		evq.Collect(s.qp[i], o)
		var evs [64]EVEvent
		note("ev events %v", evs[:evq.Poll(evs[:])])
	}
	for i := range qps {
		s.mem[i] = make([]byte, 1<<17)
		a := Attr{EVProfileID: 7, CCProfileID: 9, MPR: 2, MPRDest: 2, MaxWIMM: 4, MaxWIMMDest: 4,
			Cap: CapDynamicMPR, Timeout: 6, Retry: Retry{LinearCnt: 3, ExpCnt: 3}, PathMTU: 1024,
			DestQPN: qps[1-i].QPN()}
		note("bringup %d %v", i, qps[i].BringUp(0, a, &s.out))
		for k := 0; k < 10; k++ {
			note("recv %d %v", i, qps[i].PostRecv(0, uint64(1000+k), &s.out))
		}
		s.collect(i)
	}
	post := func(i int, wr WorkRequest) {
		note("post %d %v", i, qps[i].Post(s.now, wr, &s.out))
		s.collect(i)
	}
	for k := 0; k < 12; k++ {
		n := 700 + 900*k
		data := make([]byte, n)
		for j := range data {
			data[j] = byte(k*7 + j)
		}
		wr := WorkRequest{WRID: uint64(k), Opcode: OpWrite, RemoteVA: baseVA + uint64(k)*0x2000, RKey: 1, Data: data}
		if k%3 == 2 {
			wr.Opcode, wr.Imm, wr.Solicited = OpWriteImm, uint32(k), k%2 == 0
		}
		post(k%2, wr)
	}
	s.run(2 * Millisecond)
	for i, q := range qps {
		note("end %d %v %v %v %x", i, q.State(), q.ErrorCause(), s.comps[i], sha256.Sum256(s.mem[i]))
		for _, e := range s.events[i] {
			note("%+v", e)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// TestConfigFieldsCatchIgnored shows the check failing on a field that is
// accepted and ignored: without coalescing, Policy.Ack.Delay does nothing.
func TestConfigFieldsCatchIgnored(t *testing.T) {
	base := func() fieldsCase {
		c := fieldsBaseV4()
		c.Node.Policy.Ack.Coalesce = 1
		return c
	}
	errs := ignoredFields([]func() fieldsCase{base}, nil, "Node.Policy.Ack.")
	want := "Node.Policy.Ack.Delay: accepted but ignored: no value tried changes the run"
	if !slices.Contains(errs, want) || len(errs) != 1 {
		t.Errorf("got %q, want only %q", errs, want)
	}
}

// TestSTEVHalvesOnTheWire: under a profile whose stev_halves puts EV[31:16]
// in the UDP source port (the emu preset), a QP's data packets and the
// endpoint agent's requests over IPv6 carry the EV that way, and the EV
// read back from them is the EV sent (AMB-23, WIRE-EV-1).
func TestSTEVHalvesOnTheWire(t *testing.T) {
	prof := spec.DefaultProfile()
	prof.STEVHalves = spec.STEVHighInSrcPort
	check := func(who string, og Outgoing) {
		t.Helper()
		p := &og.Pkt
		if p.UDP.SrcPort != uint16(og.EV>>16) || p.IP6.FlowLabel != og.EV&0xFFFF {
			t.Errorf("%s: EV %#x sent as source port %#x, flow label %#x", who, og.EV, p.UDP.SrcPort, p.IP6.FlowLabel)
		}
		c, _ := wire.NewCodec(prof)
		if got := c.EV(p, wire.EVModeSTEV); got != og.EV {
			t.Errorf("%s: EV %#x reads back as %#x", who, og.EV, got)
		}
	}
	c := fieldsBaseV6()
	c.Node.Profile = &prof
	c.Node.EVProfiles[0].SRv6 = nil
	c.Node = fieldsWideEVs(c.Node)
	q, err := New(c.Node, c.QP)
	if err != nil {
		t.Fatal(err)
	}
	var out Output
	a := Attr{EVProfileID: 7, CCProfileID: 9, MPR: 2, MPRDest: 2, MaxWIMM: 4, MaxWIMMDest: 4, Timeout: 6,
		Retry: Retry{LinearCnt: 3, ExpCnt: 3}, PathMTU: 1024, DestQPN: qpnB}
	if err := q.BringUp(0, a, &out); err != nil {
		t.Fatal(err)
	}
	if err := q.Post(0, WorkRequest{WRID: 1, RemoteVA: baseVA, RKey: 1, Data: make([]byte, 100)}, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Packets) != 1 {
		t.Fatalf("%d packets, want 1", len(out.Packets))
	}
	check("QP", out.Packets[0])
	e, err := NewEndpoint(EndpointConfig{Profile: &prof, SrcIP: c.QP.Addr.SrcIP})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	dst := Peer{IP: c.QP.Addr.DstIP}
	if err := e.Send(0, EPRequest{ReqID: 1, Op: wire.EPEVProbe, Dst: dst, EV: 0x51234, Port: 1}, &out); err != nil {
		t.Fatal(err)
	}
	check("endpoint", out.Packets[0])
}

// TestSRv6SettingsActedOn (WIRE-ENC-2, WIRE-EV-4): an SRv6 setting the QP
// would not act on is refused: SRv6 paths on an IPv4 QP's node, and the
// SRv6 EV mode with no profile holding paths. The same settings where
// they apply are accepted.
func TestSRv6SettingsActedOn(t *testing.T) {
	newQP := func(c fieldsCase) error {
		n, err := NewNode(c.Node)
		if err != nil {
			t.Fatal(err)
		}
		_, err = n.NewQP(c.QP)
		return err
	}
	v6 := fieldsBaseV6()
	v6.QP.Addr.EVMode = wire.EVModeSRv6
	if err := newQP(v6); err != nil {
		t.Errorf("IPv6 QP, SRv6 mode, profile with paths: %v", err)
	}
	noPaths := fieldsBaseV6()
	noPaths.QP.Addr.EVMode = wire.EVModeSRv6
	noPaths.Node.EVProfiles[0].SRv6 = nil
	if err := newQP(noPaths); err == nil || !strings.Contains(err.Error(), "Addr.EVMode") {
		t.Errorf("SRv6 mode with no paths: %v, want a configuration error naming Addr.EVMode", err)
	}
	v4 := fieldsBaseV4()
	v4.Node.EVProfiles[0].SRv6 = fieldsBaseV6().Node.EVProfiles[0].SRv6
	if err := newQP(v4); err == nil || !strings.Contains(err.Error(), "EVProfiles[id=7].SRv6") {
		t.Errorf("IPv4 QP with SRv6 paths: %v, want a configuration error naming EVProfiles[id=7].SRv6", err)
	}
}

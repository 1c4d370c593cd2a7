package peer

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/netip"
	"testing"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
	"github.com/openmrc/mrc/wire"
)

// Records of FuzzAgent's input; the kind is the first byte mod 4.
const (
	recControl = iota // method index byte, then params up to a newline
	recFrame          // plane in the kind's high bits, u16 length, frame bytes
	recAdvance        // u16 microseconds
	recTx             // take what the agent transmits
)

// fataler is what a seed helper needs of its *testing.T, B or F; not
// testing.TB, which the *testing.F of the libFuzzer build
// (go-118-fuzz-build, .clusterfuzzlite/build.sh) does not implement.
type fataler interface{ Fatal(args ...any) }

// agentSetup is a control session that brings a QP to RTS and posts a
// WRITE, as the active tester does: FuzzAgent's seeds start with it so
// that the fuzzer mutates from a QP that sends and receives.
func agentSetup(t fataler) []byte {
	one, zero, acc, mtu, dest, mpr, wimm, to := uint64(1), 0, 0xF, 1024, uint32(0x20001), 2, 4, 4
	av := control.AV{MAC: "02:00:00:00:00:09", IP: "10.0.0.9"}
	retry := control.Retry{LinearCnt: 3, ExpCnt: 1}
	caps, psn := []string{}, uint32(0)
	calls := []struct {
		m string
		p any
	}{
		{control.MethodHello, control.HelloParams{Version: control.Version}},
		{control.MethodSetEVProfile, control.EVProfile{ID: 1, ActivePerPlane: 1, EVs: []control.EV{{Value: 0x4101, Port: 1},
			{Value: 0x4102, Port: 1}, {Value: 0x4201, Port: 2}}}},
		{control.MethodSetCCProfile, control.CCProfile{ID: 1, Algorithm: control.CCNone}},
		{control.MethodRegMR, control.RegMRParams{Length: 4096, Access: []string{control.AccessLocalWrite, control.AccessRemoteWrite}}},
		{control.MethodCreateQP, control.CreateQPParams{MaxSendWR: 8, MaxRecvWR: 8}},
		{control.MethodModifyQP, control.ModifyQPParams{QPN: firstQPN, State: control.StateInit,
			Attr: control.QPAttr{EVProfileID: &one, CCProfileID: &one, PKeyIndex: &zero, AccessFlags: &acc}}},
		{control.MethodPostRecv, control.PostRecvParams{QPN: firstQPN, WRID: 9}},
		{control.MethodModifyQP, control.ModifyQPParams{QPN: firstQPN, State: control.StateRTR,
			Attr: control.QPAttr{PathMTU: &mtu, DestQPN: &dest, AV: &av, MPRDest: &mpr, MaxWIMMDest: &wimm, Cap: &caps, RQPSN: &psn}}},
		{control.MethodModifyQP, control.ModifyQPParams{QPN: firstQPN, State: control.StateRTS,
			Attr: control.QPAttr{MPR: &mpr, MaxWIMM: &wimm, Retry: &retry, Timeout: &to, SQPSN: &psn}}},
	}
	var b []byte
	for _, c := range calls {
		p, err := json.Marshal(c.p)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for i < len(control.Methods) && control.Methods[i] != c.m {
			i++
		}
		b = append(append(append(b, recControl, byte(i)), p...), '\n')
	}
	return b
}

// FuzzAgent drives the reference agent (mrc-peer's core) with an arbitrary
// sequence of control requests (any method, any params), frames on any
// plane, time steps and transmissions taken. It must not panic; every
// request gets a result or a typed *control.Error; after every record the
// agent's state stays within the limits it advertises (memory, regions,
// QPs, profiles, each QP's queues and CQ, the completions of all CQs,
// neighbour tables, remote port masks); and every frame it transmits passes
// the codec's checks.
func FuzzAgent(f *testing.F) {
	setup := agentSetup(f)
	f.Add(setup)
	post, _ := json.Marshal(postSeed)
	f.Add(append(append(append(bytes.Clone(setup), recControl, byte(indexOf(control.MethodPostSend))), post...), '\n',
		recAdvance, 0, 10, recTx, recAdvance, 0x10, 0, recTx))
	f.Add([]byte{recFrame, 0, 60, 1, 2, 3})
	f.Add(append([]byte{recFrame | 4<<2, 0, 8}, make([]byte, 8)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		a, err := New(Config{MACs: [][6]byte{{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}}, IP: netip.MustParseAddr("10.0.0.2")})
		if err != nil {
			t.Fatal(err)
		}
		var now statemachine.Time
		var tx []Tx
		var pkt wire.Packet
		for rec := 0; len(data) > 0; rec++ {
			kind := data[0]
			data = data[1:]
			switch kind % 4 {
			case recControl:
				if len(data) == 0 {
					return
				}
				m := control.Methods[int(data[0])%len(control.Methods)]
				params := data[1:]
				if i := bytes.IndexByte(params, '\n'); i >= 0 {
					params, data = params[:i], params[i+1:]
				} else {
					data = nil
				}
				if bigRegion(m, params) {
					continue // allocating hundreds of MiB per run only slows the fuzzer
				}
				if _, err := a.Handle(now, m, bytes.Clone(params)); err != nil {
					var ce *control.Error
					if !errors.As(err, &ce) || ce.Code == "" {
						t.Fatalf("record %d: %s answered an untyped error %T: %v", rec, m, err, err)
					}
				}
			case recFrame:
				if len(data) < 2 {
					return
				}
				n := int(binary.BigEndian.Uint16(data)) % 1600
				data = data[2:]
				n = min(n, len(data))
				a.Receive(now, int(kind>>2)%3, bytes.Clone(data[:n]))
				data = data[n:]
			case recAdvance:
				if len(data) < 2 {
					return
				}
				now += statemachine.Time(binary.BigEndian.Uint16(data)) * statemachine.Microsecond
				data = data[2:]
				a.Advance(now)
			case recTx:
				tx = a.TakeTx(tx[:0])
				for _, x := range tx {
					if x.Plane < 0 || x.Plane >= a.ports {
						t.Fatalf("record %d: frame on plane %d of %d", rec, x.Plane, a.ports)
					}
					if err := a.codec.Decode(x.Frame, &pkt); err != nil {
						t.Fatalf("record %d: the agent sent a frame its codec rejects: %v", rec, err)
					}
				}
			}
			checkLimits(t, rec, a)
		}
	})
}

// postSeed posts a 3000-byte WRITE from the setup's region.
var postSeed = control.PostSendParams{QPN: firstQPN, WRID: 1, Opcode: control.OpRDMAWrite,
	Local: &control.SGE{MR: 1, Length: 3000}, Remote: control.Remote{VA: 0x1000, RKey: 1}}

// bigRegion reports a reg_mr of more than 16 MiB.
func bigRegion(m string, params []byte) bool {
	var p control.RegMRParams
	return m == control.MethodRegMR && json.Unmarshal(params, &p) == nil && p.Length > 16<<20
}

func indexOf(m string) int {
	for i, x := range control.Methods {
		if x == m {
			return i
		}
	}
	return -1
}

// checkLimits checks the limits the agent advertises in hello and
// enforces on every request.
func checkLimits(t *testing.T, rec int, a *Agent) {
	t.Helper()
	var mem uint64
	for _, r := range a.mrs {
		mem += uint64(len(r.buf))
	}
	switch {
	case a.memory > maxMemory || mem != a.memory:
		t.Fatalf("record %d: %d bytes in regions, %d accounted, limit %d", rec, mem, a.memory, maxMemory)
	case len(a.mrs) > maxMRs:
		t.Fatalf("record %d: %d regions, limit %d", rec, len(a.mrs), maxMRs)
	case len(a.qps) > maxQPs || len(a.order) > maxQPs:
		t.Fatalf("record %d: %d QPs, limit %d", rec, len(a.qps), maxQPs)
	case len(a.evp) > maxProfiles || len(a.ccp) > maxProfiles:
		t.Fatalf("record %d: %d EV and %d CC profiles, limit %d", rec, len(a.evp), len(a.ccp), maxProfiles)
	}
	for pl, m := range a.neigh {
		if len(m) > MaxNeighbours {
			t.Fatalf("record %d: %d neighbours learned on plane %d, limit %d", rec, len(m), pl, MaxNeighbours)
		}
	}
	if len(a.remote) > MaxRemotePeers {
		t.Fatalf("record %d: %d remote port masks kept, limit %d", rec, len(a.remote), MaxRemotePeers)
	}
	held := 0
	for _, e := range a.qps {
		held += len(e.cq)
		if len(e.cq) > MaxCQEntries {
			t.Fatalf("record %d: QP %#x holds %d completions, limit %d", rec, e.qpn, len(e.cq), MaxCQEntries)
		}
		if e.create.MaxSendWR > maxQueue || e.create.MaxRecvWR > maxQueue || len(e.recvs) > maxQueue {
			t.Fatalf("record %d: QP %#x queues %d/%d, %d receives held, limit %d", rec, e.qpn, e.create.MaxSendWR,
				e.create.MaxRecvWR, len(e.recvs), maxQueue)
		}
	}
	if held != a.cqHeld || held > MaxCQEntriesTotal {
		t.Fatalf("record %d: %d completions in all CQs, %d accounted, limit %d", rec, held, a.cqHeld, MaxCQEntriesTotal)
	}
}

// TestAgentSetupSeed: FuzzAgent's setup seed brings its QP to RTS, so the
// fuzzer starts from a QP that sends.
func TestAgentSetupSeed(t *testing.T) {
	a, err := New(Config{MACs: [][6]byte{{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}}, IP: netip.MustParseAddr("10.0.0.2")})
	if err != nil {
		t.Fatal(err)
	}
	data := agentSetup(t)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		m := control.Methods[data[1]]
		if _, err := a.Handle(0, m, json.RawMessage(data[2:i])); err != nil {
			t.Fatalf("%s %s: %v", m, data[2:i], err)
		}
		data = data[i+1:]
	}
	if e := a.qps[firstQPN]; e == nil || e.qp == nil || e.qp.State() != statemachine.StateRTS {
		t.Fatalf("QP %#x not in RTS after the setup", firstQPN)
	}
	p, _ := json.Marshal(postSeed)
	if _, err := a.Handle(0, control.MethodPostSend, p); err != nil {
		t.Fatal(err)
	}
	a.Advance(statemachine.Microsecond)
	if n := len(a.TakeTx(nil)); n == 0 {
		t.Fatal("nothing sent after the post")
	}
}

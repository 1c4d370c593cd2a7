package workload_test

import (
	"strings"
	"testing"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/fabric/workload"
	sm "github.com/openmrc/mrc/statemachine"
)

// drainRun posts sixteen 64 KiB writes over a lossy two-plane fabric,
// moves the requester to SQD (asking for SQ_DRAINED) 2 µs later, while
// some are in flight and others wait for the window of 128 PSNs, posts two more, runs
// until SQ_DRAINED (or a second) and 10 ms more. Then it resumes and runs
// until every write completes. It returns the harness, the writes
// completed when SQ_DRAINED came and those completed between it and the
// resume.
func drainRun(t *testing.T, faults sm.Faults) (h *workload.Harness, atDrained, early uint64) {
	t.Helper()
	cfg := sm.DefaultConfig(7)
	cfg.Test.Faults = faults
	attr := workload.DefaultAttr()
	attr.MPR, attr.MPRDest = 1, 1 // 128 PSNs: eight of the writes
	var err error
	h, err = workload.New(workload.Options{Fabric: fabric.Config{Seed: 7, Planes: 2}, MRC: cfg, Attr: attr, QP: sm.QPConfig{MaxSendWR: 32, MaxRecvWR: 32}, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := h.Connect(0, 1, workload.MRC)
	if err != nil {
		t.Fatal(err)
	}
	loss := fabric.NewRule()
	loss.Drop = 0.02
	if _, err := h.Sim.AddRule(loss); err != nil {
		t.Fatal(err)
	}
	post := func(k int) {
		if _, err := h.Post(workload.WR{Conn: conn.ID, Imm: k%2 == 1, Chunk: 16 * k, Size: 64 << 10}); err != nil {
			t.Fatal(err)
		}
	}
	for k := range 16 {
		post(k)
	}
	h.Sim.Run(h.Sim.Now() + 2*sm.Microsecond)
	if err := h.Drain(conn.ID, true); err != nil {
		t.Fatal(err)
	}
	post(16)
	post(17)
	h.Sim.RunUntil(func() bool { return h.SQDrained(conn.ID) > 0 || h.Failed() }, h.Sim.Now()+sm.Second)
	atDrained = conn.Completed
	h.Sim.Run(h.Sim.Now() + 10*sm.Millisecond)
	early = conn.Completed - atDrained
	if err := h.Resume(conn.ID); err != nil {
		t.Fatal(err)
	}
	h.Sim.RunUntil(func() bool { return h.Outstanding() == 0 }, h.Sim.Now()+sm.Second)
	h.Finish()
	return h, atDrained, early
}

// TestDrainOnFabric: the application drains the send queue mid-transfer
// (RTS→SQD with EN_SQD_ASYNC_NOTIFY): the writes started finish through
// loss, SQ_DRAINED comes once they have, the rest wait until the QP is
// back in RTS, and all eighteen complete with every invariant holding
// (QP-ST-12, CTL-AEV-6).
func TestDrainOnFabric(t *testing.T) {
	h, atDrained, early := drainRun(t, 0)
	c := h.Conns()[0]
	if v := h.Violations(); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
	t.Logf("SQ_DRAINED with %d writes complete", atDrained)
	if h.SQDrained(c.ID) != 1 || atDrained == 0 || atDrained >= 16 || early != 0 || c.Completed != 18 {
		t.Errorf("%d SQ_DRAINED; %d writes complete at it (want 1-15), %d more before the resume (want 0), %d of 18 in the end",
			h.SQDrained(c.ID), atDrained, early, c.Completed)
	}
}

// TestDrainCatchesSeededFaults: the harness's drain checks catch a QP that
// raises SQ_DRAINED before the started writes complete and one that starts
// new writes in SQD.
func TestDrainCatchesSeededFaults(t *testing.T) {
	for _, c := range []struct {
		f   sm.Faults
		req string
	}{{sm.FaultSQDrainedEarly, "CTL-AEV-6"}, {sm.FaultSQDStartsNew, "QP-ST-12"}, {sm.FaultSQDrainedAtMoveOnly, "CTL-AEV-6"}} {
		h, _, _ := drainRun(t, c.f)
		t.Logf("%s: %v", c.f, h.Violations()[:min(2, len(h.Violations()))])
		var reqs []string
		for _, v := range h.Violations() {
			reqs = append(reqs, v.Req)
		}
		if !strings.Contains(strings.Join(reqs, " "), c.req) {
			t.Errorf("fault %s: violations %v, want %s", c.f, h.Violations(), c.req)
		}
	}
}

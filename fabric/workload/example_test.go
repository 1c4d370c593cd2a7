package workload_test

import (
	"fmt"

	"github.com/openmrc/mrc/fabric"
	"github.com/openmrc/mrc/fabric/workload"
	"github.com/openmrc/mrc/linearize"
	sm "github.com/openmrc/mrc/statemachine"
)

// Write over an MRC connection through 2 % loss with every invariant
// checked, then check the recorded history for linearizability.
func ExampleHarness() {
	var hist linearize.History
	h, err := workload.New(workload.Options{Fabric: fabric.Config{Seed: 1}, Check: true, History: &hist})
	if err != nil {
		panic(err)
	}
	c, err := h.Connect(0, 1, workload.MRC)
	if err != nil {
		panic(err)
	}
	loss := fabric.NewRule()
	loss.Drop = 0.02
	if _, err := h.Sim.AddRule(loss); err != nil {
		panic(err)
	}
	for k := 0; k < 8; k++ {
		if _, err := h.Post(workload.WR{Conn: c.ID, Imm: k%2 == 1, Chunk: 16 * k, Size: 64 << 10}); err != nil {
			panic(err)
		}
	}
	h.Sim.RunUntil(func() bool { return h.Outstanding() == 0 }, sm.Second)
	h.Finish()
	reg, fifo := linearize.CheckHistory(&hist, 0)
	fmt.Printf("%d of %d writes completed, %d violations; memory %s, WriteIMM stream %s\n",
		c.Completed, c.Posted, len(h.Violations()), reg.Verdict, fifo.Verdict)
	// Output:
	// 8 of 8 writes completed, 0 violations; memory linearizable, WriteIMM stream linearizable
}

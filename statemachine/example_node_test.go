package statemachine_test

import (
	"errors"
	"fmt"

	"github.com/openmrc/mrc/statemachine"
)

// One NIC, two QPs: the Node holds what the NIC fixes for all its QPs
// (profiles, device limits, policies), compiled once; each QP brings its
// own number, seed, address vector and queue depths.
func ExampleNode_NewQP() {
	cfg := statemachine.DefaultConfig(1)
	cfg.Policy.Ack.Coalesce = 4 // every QP of this NIC coalesces SACKs
	node, err := statemachine.NewNode(cfg)
	if err != nil {
		panic(err)
	}
	for _, qc := range []statemachine.QPConfig{
		statemachine.DefaultQPConfig(0x101, 1),
		{QPN: 0x102, Seed: 2, Addr: statemachine.DefaultQPConfig(0, 0).Addr, MaxSendWR: 64},
		{QPN: 0x2, Addr: statemachine.DefaultQPConfig(0, 0).Addr}, // QP 2 is reserved
	} {
		q, err := node.NewQP(qc)
		var ce *statemachine.ConfigError
		switch {
		case errors.As(err, &ce):
			fmt.Printf("QP %#x refused: field %s\n", qc.QPN, ce.Field)
		case err != nil:
			panic(err)
		default:
			fmt.Printf("QP %#x in %s\n", q.QPN(), q.State())
		}
	}
	// Output:
	// QP 0x101 in RESET
	// QP 0x102 in RESET
	// QP 0x2 refused: field QPN
}

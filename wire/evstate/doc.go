// Package evstate is the EV path-state vocabulary of spec/21-paths.md: the
// states an EV of a QP is in (EV-ST-1), the events that move it, the table
// of allowed transitions (EV-ST-2 to EV-ST-10, EV-ST-14, EV-SM-5), the
// ev_min_active floor on retirement (EV-SET-6), and what each piece of
// feedback on the wire (a SACK's m verdict, a NACK's reason) means for the
// EV it reflects.
//
// It is the one home of that vocabulary. The reference state machine
// (statemachine) applies the table; the capture statistics (pcap) name
// the states they infer with it; the passive judge (conformance) reads
// feedback and retirements through it while judging on its own, from the
// capture, without running the state machine. internal/evtable is the
// exception on purpose: the oracle the model checker holds the state
// machine to, written apart from this package.
//
// The package lives beside wire because the events it names are wire
// feedback; like wire it is pure and allocates nothing.
package evstate

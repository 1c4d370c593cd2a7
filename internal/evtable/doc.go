// Package evtable is the spec's per-EV path-state table (spec/21-paths.md
// EV-ST-2 to EV-ST-10 and EV-ST-14, with EV-SM-5 of
// spec/21-statemachine-decisions.md) for the checkers that judge the
// statemachine: the model checker and the fabric harness. It is written
// out from the spec, not taken from statemachine's own table, so that a
// check against it tests the code rather than repeating it. It is the one
// deliberate second copy of the path-state vocabulary: everything else
// (pcap's inferred states, the peer, the fabric) uses statemachine.EVState.
package evtable

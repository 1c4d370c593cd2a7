// Package capture is where the simulator's frames become evidence files:
// Pcapng, the fabric.FrameSink that writes a pcapng with a tx and an rx
// interface per plane, and the capture scenarios — short runs with one
// impairment each, whose captures pcap/testdata/scenarios keeps — with the
// check that a capture shows its impairment on the wire.
//
// It sits above both fabric and pcap, so that the simulator itself needs
// no capture format: data flows spec → wire → statemachine → fabric →
// pcap, and this package joins the last two.
package capture

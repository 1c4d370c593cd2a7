package spec

import "fmt"

// BTHFlagOrder says where the SE and M bits of BTH byte 1 sit.
type BTHFlagOrder uint8

const (
	// BTHFlagOrderIBTA puts SE in bit 7 and M in bit 6, as IBTA and tshark do.
	BTHFlagOrderIBTA BTHFlagOrder = iota
	// BTHFlagOrderSwapped puts M in bit 7 and SE in bit 6, as one
	// spec-derived emulator does (AMB-4).
	BTHFlagOrderSwapped
)

// WIMMLimitSignal says how a responder reports a WriteIMM over max_wimm_dest.
type WIMMLimitSignal uint8

const (
	// WIMMLimitAETHInvalidRequest answers with an AETH NAK "Invalid
	// Request" and moves the QP to ERROR (AMB-8).
	WIMMLimitAETHInvalidRequest WIMMLimitSignal = iota
	// WIMMLimitNACKUnexpEvent answers with a Reliability NACK UNEXP_EVENT.
	WIMMLimitNACKUnexpEvent
)

// PortStatusSignal says how a NIC tells its peers that a local port changed.
type PortStatusSignal uint8

const (
	// PortStatusEndpointOp uses the Port Status Update endpoint operation
	// (ERTH op PORT_STATUS_UPDATE) (AMB-7).
	PortStatusEndpointOp PortStatusSignal = iota
	// PortStatusNone sends no port status: peers learn of a failed plane
	// from timeouts and probes (AMB-7).
	PortStatusNone
)

// STEVHalves says which half of a 32-bit EV the UDP source port carries in
// STEV mode; the other half rides in flow-label bits 15:0 (AMB-23).
type STEVHalves uint8

const (
	// STEVLowInSrcPort puts EV[15:0] in the source port (WIRE-UDP-2).
	STEVLowInSrcPort STEVHalves = iota
	// STEVHighInSrcPort puts EV[31:16] in the source port, as EMU does.
	STEVHighInSrcPort
)

// ICRCVariant is the ICRC algorithm (AMB-90).
type ICRCVariant uint8

const (
	// ICRCIBTA is the RoCEv2 ICRC of WIRE-ICRC-1.
	ICRCIBTA ICRCVariant = iota
	// ICRCEmu is EMU's: a reflected CRC with the constant 0x1EDC6F41 over
	// the UDP payload, unmasked, most significant byte first.
	ICRCEmu
)

// ERTHOpOrder is the numbering of the ERTH/EETH op field (AMB-25).
type ERTHOpOrder uint8

const (
	// ERTHOpEMU numbers PORT_STATUS_UPDATE 0 and EV_PROBE 1.
	ERTHOpEMU ERTHOpOrder = iota
	// ERTHOpAPI numbers them as enum mrc_ctl_ep_op_type does: EV_PROBE 0,
	// PORT_STATUS_UPDATE 1.
	ERTHOpAPI
)

// RetransmitClass says which DSCP class retransmissions use (AMB-10).
type RetransmitClass uint8

const (
	// RetransmitTrimmableRetx sends retransmissions as data with DSCPTrimmableRetx.
	RetransmitTrimmableRetx RetransmitClass = iota
	// RetransmitControl sends retransmissions in the high-priority control class.
	RetransmitControl
)

// DSCPs holds the six code points MRC names; the numbers are not public (AMB-5).
type DSCPs struct {
	Control        uint8 `json:"control"`         // SACK, NACK, ACK
	Trimmed        uint8 `json:"trimmed"`         // trimmed header, not last hop
	TrimmedLastHop uint8 `json:"trimmed_lasthop"` // trimmed at the last hop
	Trimmable      uint8 `json:"trimmable"`       // first transmissions of data
	NoTrim         uint8 `json:"no_trim"`         // data that must not be trimmed
	TrimmableRetx  uint8 `json:"trimmable_retx"`  // retransmitted data
}

// Profile holds every wire-level choice the public sources leave open. Each
// field names the ambiguity-register entry (AMB-n) that explains the
// default. Decoders accept what the profile allows; encoders emit exactly
// the profile's choice.
type Profile struct {
	Name string `json:"name"`

	// UDPDstPort is the destination port encoders write (AMB-1).
	UDPDstPort uint16 `json:"udp_dst_port" amb:"AMB-1"`
	// AcceptUDPDstPorts are the destination ports decoders accept as MRC.
	AcceptUDPDstPorts []uint16 `json:"accept_udp_dst_ports" amb:"AMB-1"`

	// BTHFlagOrder places SE and M in BTH byte 1 (AMB-4).
	BTHFlagOrder BTHFlagOrder `json:"bth_flag_order" amb:"AMB-4"`
	// BTHRetransmitMask and BTHTimestampMask locate the MRC flags in BTH
	// byte 8 (AMB-3). AckReq stays at 0x80 as in IBTA.
	BTHRetransmitMask uint8 `json:"bth_rtx_mask" amb:"AMB-3"`
	BTHTimestampMask  uint8 `json:"bth_ts_mask" amb:"AMB-3"`

	// DSCP values of the six named classes (AMB-5).
	DSCP DSCPs `json:"dscp" amb:"AMB-5"`

	// ICRCMaskUDPSrcPort excludes the UDP source port (EV[15:0]) from the
	// ICRC as a variant field (AMB-6). The SRv6 outer header is always
	// excluded and the IPv6 flow label is always masked.
	ICRCMaskUDPSrcPort bool `json:"icrc_mask_udp_src_port" amb:"AMB-6"`

	// TimestampUnitNs is the unit of the 16-bit TSETH/CC_STATE timestamps
	// when TSR is 0 (AMB-11).
	TimestampUnitNs uint32 `json:"timestamp_unit_ns" amb:"AMB-11"`
	// RcvdBytesUnit is the unit of CC_STATE rcvd_bytes (AMB-12).
	RcvdBytesUnit uint32 `json:"rcvd_bytes_unit" amb:"AMB-12"`

	// WIMMLimit says how a responder reports a WriteIMM over its limit (AMB-8).
	WIMMLimit WIMMLimitSignal `json:"wimm_limit_signal" amb:"AMB-8"`
	// PortStatus says how port changes reach peers (AMB-7).
	PortStatus PortStatusSignal `json:"port_status_signal" amb:"AMB-7"`
	// Retransmit says which class retransmissions use (AMB-10).
	Retransmit RetransmitClass `json:"retransmit_class" amb:"AMB-10"`

	// STEVHalves places the EV's halves in STEV mode (AMB-23).
	STEVHalves STEVHalves `json:"stev_halves" amb:"AMB-23"`
	// ICRC is the ICRC algorithm encoders write and decoders verify (AMB-90).
	ICRC ICRCVariant `json:"icrc" amb:"AMB-90"`
	// ERTHOpOrder numbers the endpoint operations on the wire (AMB-25).
	ERTHOpOrder ERTHOpOrder `json:"erth_op_order" amb:"AMB-25"`
	// NETHCCType is the NETH cc_type encoders write and checks expect (AMB-34).
	NETHCCType uint8 `json:"neth_cc_type" amb:"AMB-34"`
}

// DefaultProfile is the project's registered default. Every value is a
// project decision recorded in the ambiguity register, not a fact from the
// OCP text.
func DefaultProfile() Profile {
	return Profile{
		Name:              "openmrc-default-1",
		UDPDstPort:        4791,
		AcceptUDPDstPorts: []uint16{4791, 4971},
		BTHFlagOrder:      BTHFlagOrderIBTA,
		BTHRetransmitMask: 0x20,
		BTHTimestampMask:  0x10,
		DSCP: DSCPs{
			Control: 46, Trimmed: 12, TrimmedLastHop: 16,
			Trimmable: 4, NoTrim: 0, TrimmableRetx: 8,
		},
		ICRCMaskUDPSrcPort: false,
		TimestampUnitNs:    128,
		RcvdBytesUnit:      256,
		WIMMLimit:          WIMMLimitAETHInvalidRequest,
		PortStatus:         PortStatusEndpointOp,
		Retransmit:         RetransmitTrimmableRetx,
	}
}

// OrDefault returns p, or a fresh copy of DefaultProfile when p is nil: the
// one place that says "no profile means the default profile".
func OrDefault(p *Profile) *Profile {
	if p != nil {
		return p
	}
	d := DefaultProfile()
	return &d
}

// Validate reports the first setting that would make the wire ambiguous.
func (p *Profile) Validate() error {
	if p.UDPDstPort == 0 {
		return fmt.Errorf("spec: profile %q: udp_dst_port is 0", p.Name)
	}
	if !p.AcceptsUDPDstPort(p.UDPDstPort) {
		return fmt.Errorf("spec: profile %q: udp_dst_port %d is not in accept_udp_dst_ports", p.Name, p.UDPDstPort)
	}
	const reserved = 0x80 // AckReq
	for _, m := range []struct {
		name string
		v    uint8
	}{{"bth_rtx_mask", p.BTHRetransmitMask}, {"bth_ts_mask", p.BTHTimestampMask}} {
		if m.v == 0 || m.v&(m.v-1) != 0 || m.v == reserved {
			return fmt.Errorf("spec: profile %q: %s 0x%02x must be one bit other than AckReq (0x80)", p.Name, m.name, m.v)
		}
	}
	if p.BTHRetransmitMask == p.BTHTimestampMask {
		return fmt.Errorf("spec: profile %q: bth_rtx_mask and bth_ts_mask are both 0x%02x", p.Name, p.BTHRetransmitMask)
	}
	d := p.DSCP
	vals := []uint8{d.Control, d.Trimmed, d.TrimmedLastHop, d.Trimmable, d.NoTrim, d.TrimmableRetx}
	names := []string{"control", "trimmed", "trimmed_lasthop", "trimmable", "no_trim", "trimmable_retx"}
	for i, v := range vals {
		if v > 63 {
			return fmt.Errorf("spec: profile %q: dscp.%s %d exceeds 63", p.Name, names[i], v)
		}
		for j := 0; j < i; j++ {
			if vals[j] == v {
				return fmt.Errorf("spec: profile %q: dscp.%s and dscp.%s are both %d", p.Name, names[j], names[i], v)
			}
		}
	}
	if p.TimestampUnitNs == 0 || p.RcvdBytesUnit == 0 {
		return fmt.Errorf("spec: profile %q: timestamp_unit_ns and rcvd_bytes_unit must be non-zero", p.Name)
	}
	for _, e := range []struct {
		name   string
		v, max uint8
	}{
		{"bth_flag_order", uint8(p.BTHFlagOrder), uint8(BTHFlagOrderSwapped)},
		{"wimm_limit_signal", uint8(p.WIMMLimit), uint8(WIMMLimitNACKUnexpEvent)},
		{"port_status_signal", uint8(p.PortStatus), uint8(PortStatusNone)},
		{"retransmit_class", uint8(p.Retransmit), uint8(RetransmitControl)},
		{"stev_halves", uint8(p.STEVHalves), uint8(STEVHighInSrcPort)},
		{"icrc", uint8(p.ICRC), uint8(ICRCEmu)},
		{"erth_op_order", uint8(p.ERTHOpOrder), uint8(ERTHOpAPI)},
		{"neth_cc_type", p.NETHCCType, 15},
	} {
		if e.v > e.max {
			return fmt.Errorf("spec: profile %q: %s %d is not a defined value", p.Name, e.name, e.v)
		}
	}
	return nil
}

// AcceptsUDPDstPort reports whether decoders treat port as MRC.
func (p *Profile) AcceptsUDPDstPort(port uint16) bool {
	for _, a := range p.AcceptUDPDstPorts {
		if a == port {
			return true
		}
	}
	return false
}

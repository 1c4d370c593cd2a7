package pcap

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"text/template"

	"github.com/openmrc/mrc/pcap/internal/opstack"
	"github.com/openmrc/mrc/wire"
)

//go:embed dissector.lua.tmpl
var luaTemplate string

// LuaRequirements are the requirement IDs the generated Wireshark
// dissector for c can report in its mrc.req field: every rule of
// wire.Codec.Decode and Check. For each of them the dissector and the Go
// decoder agree, which the tshark test checks on the corpus.
func LuaRequirements(c *wire.Codec) []string {
	if c == nil {
		c = wire.Default
	}
	r := deriveReqs(c)
	var ids []string
	v := reflect.ValueOf(r)
	for i := 0; i < v.NumField(); i++ {
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			ids = append(ids, f.String())
		case reflect.Map:
			for _, k := range f.MapKeys() {
				ids = append(ids, f.MapIndex(k).String())
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

type luaField struct {
	Key, Abbrev, Name   string
	SB, NB, Shift       int
	VMask, Mask         uint64
	Wide, Signed, Rsv   bool
	PFType, Base, Names string
}

type luaHeader struct {
	Name, Abbrev, RsvReq string
	Len                  int
	Fields               []luaField
}

type luaGroup struct {
	Names []string
	Need  int
	Req   string
	Name  string
}

type luaStack struct {
	Op      int
	Payload bool
	Stacks  [2][]luaGroup
}

type luaData struct {
	Profile         string
	Ports           []uint16
	DSCPTrimmed     uint8
	DSCPTrimmedLast uint8
	MaskSrcPort     bool
	EndpointQPN     int
	Headers         []luaHeader
	Stacks          []luaStack
	Opcodes         map[int]string
	NACKReasons     map[int]string
	Multipath       map[int]string
	EPOps           map[int]string
	Writes          []int // opcodes that carry a payload
	NeedPayload     []int // writes that must not be empty (first, middle)
	Only            []int // single-packet writes: dma_length = payload
	EP              []int // endpoint operations
	Key             semKeys
	Req             ruleReqs
	FrameFields     []frameField
}

// WriteLua writes a Wireshark Lua dissector for c's profile (nil:
// wire.Default), generated from c.Headers(): one field per header field,
// named as WiresharkField gives. It applies every rule of wire.Codec.Decode
// and Check, reporting each finding as expert info and in the mrc.req
// field with its requirement ID, the ICRC included. It registers on the
// profile's UDP ports and hands datagrams whose opcode is outside MRC's
// 0xC0-0xDF block back to the dissector it displaced (InfiniBand's RRoCE
// on 4791).
func WriteLua(w io.Writer, c *wire.Codec) error {
	if c == nil {
		c = wire.Default
	}
	p := c.Profile()
	keys, err := deriveKeys(c)
	if err != nil {
		return err
	}
	d := luaData{Profile: p.Name, Ports: p.AcceptUDPDstPorts, DSCPTrimmed: p.DSCP.Trimmed,
		DSCPTrimmedLast: p.DSCP.TrimmedLastHop, MaskSrcPort: p.ICRCMaskUDPSrcPort, EndpointQPN: wire.EndpointQPN,
		Opcodes: map[int]string{}, NACKReasons: map[int]string{}, Multipath: map[int]string{}, EPOps: map[int]string{},
		Key: keys, Req: deriveReqs(c), FrameFields: frameFields}
	if err := missing(d.Req); err != nil {
		return err
	}
	for i := 0; i < 256; i++ {
		o := wire.Opcode(i)
		if o.Valid() {
			d.Opcodes[i] = o.String()
		}
		if o.IsWrite() {
			d.Writes = append(d.Writes, i)
		}
		if r := wire.NACKReason(i); r.Valid() {
			d.NACKReasons[i] = r.String()
		}
	}
	d.NeedPayload = []int{int(wire.OpWriteFirst), int(wire.OpWriteMiddle)}
	d.Only = []int{int(wire.OpWriteOnly), int(wire.OpWriteOnlyImm)}
	d.EP = []int{int(wire.OpEndpointReq), int(wire.OpEndpointResp)}
	for i := 0; i < 4; i++ {
		if s := wire.Multipath(i).String(); s != "RESERVED" {
			d.Multipath[i] = s
		}
		if s := wire.EndpointOp(i).String(); s != "RESERVED" {
			d.EPOps[i] = s
		}
	}
	for _, h := range c.Headers() {
		lh := luaHeader{Name: h.Name, Abbrev: "mrc." + strings.ToLower(h.Name), Len: h.Len, RsvReq: d.Req.Rsvd[h.Name]}
		fk := FieldKeys(&h)
		for i, f := range h.Fields {
			lf, err := luaFieldOf(h.Name, fk[i], f, &keys)
			if err != nil {
				return err
			}
			if lf.Rsv && lh.RsvReq == "" {
				return fmt.Errorf("pcap: wire reports no requirement for reserved bits of %s", h.Name)
			}
			lh.Fields = append(lh.Fields, lf)
		}
		d.Headers = append(d.Headers, lh)
	}
	for op := 0; op < 256; op++ {
		if !wire.Opcode(op).Valid() {
			continue
		}
		ls := luaStack{Op: op, Payload: opstack.Get(wire.Opcode(op), false).Payload}
		for ts := 0; ts < 2; ts++ {
			for _, h := range opstack.Get(wire.Opcode(op), ts == 1).Headers[1:] {
				if h.Name == "CC_STATE" {
					// wire.SETH decodes SETH and CC_STATE as one unit.
					g := &ls.Stacks[ts][len(ls.Stacks[ts])-1]
					g.Names = append(g.Names, h.Name)
					g.Need += h.Len
					continue
				}
				ls.Stacks[ts] = append(ls.Stacks[ts], luaGroup{Names: []string{h.Name}, Need: h.Len,
					Req: d.Req.Trunc[h.Name], Name: h.Name})
			}
		}
		d.Stacks = append(d.Stacks, ls)
	}
	t, err := template.New("lua").Funcs(template.FuncMap{
		"hex": func(v uint64) string { return fmt.Sprintf("0x%X", v) },
		"set": func(ops []int) string {
			s := make([]string, len(ops))
			for i, o := range ops {
				s[i] = fmt.Sprintf("[0x%02X] = true", o)
			}
			return "{ " + strings.Join(s, ", ") + " }"
		},
	}).Parse(luaTemplate)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, d); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// missing reports a rule for which wire gave no requirement ID.
func missing(r ruleReqs) error {
	v := reflect.ValueOf(r)
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			if f.String() == "" {
				return fmt.Errorf("pcap: wire reports no requirement ID for the %s rule", v.Type().Field(i).Name)
			}
		case reflect.Map:
			for _, k := range f.MapKeys() {
				if f.MapIndex(k).String() == "" {
					return fmt.Errorf("pcap: wire reports no requirement ID for %s of %s", v.Type().Field(i).Name, k)
				}
			}
		}
	}
	return nil
}

func luaFieldOf(header, key string, f wire.Field, k *semKeys) (luaField, error) {
	sb, eb := f.Bit/8, (f.Bit+f.Width-1)/8
	lf := luaField{Key: key, Abbrev: WiresharkField(header, key), Name: key, SB: sb, NB: eb - sb + 1,
		Signed: f.Signed, Rsv: f.Reserved, Base: "base.DEC", Names: "nil"}
	if f.Reserved {
		lf.Name = fmt.Sprintf("reserved (bit %d)", f.Bit)
	}
	switch {
	case lf.NB <= 4:
		lf.Shift = lf.NB*8 - f.Bit%8 - f.Width
		lf.VMask = 1<<f.Width - 1
		if f.Width != lf.NB*8 {
			lf.Mask = lf.VMask << lf.Shift
		}
		if f.Signed && lf.Mask != 0 {
			return lf, fmt.Errorf("pcap: %s.%s: signed fields must be byte-aligned for Wireshark", header, key)
		}
		lf.PFType = [...]string{"", "uint8", "uint16", "uint24", "uint32"}[lf.NB]
		if f.Signed {
			lf.PFType = "int" + lf.PFType[4:]
		}
	case f.Bit%8 == 0 && f.Width == 64 && !f.Signed:
		lf.Wide, lf.PFType = true, "uint64"
	default:
		return lf, fmt.Errorf("pcap: %s.%s: %d-bit field at bit %d has no Wireshark representation here", header, key, f.Width, f.Bit)
	}
	switch {
	case header == "BTH" && key == k.Opcode:
		lf.Base, lf.Names = "base.HEX", "OPCODES"
	case header == "NETH" && key == k.NACKReason:
		lf.Names = "NACK_REASONS"
	case header == "SETH" && key == k.SETHM:
		lf.Names = "MULTIPATH"
	case header == "ERTH" && key == k.ERTHOp, header == "EETH" && key == k.EETHOp:
		lf.Names = "EP_OPS"
	}
	return lf, nil
}

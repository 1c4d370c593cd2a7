package peer

// Memory regions: the bytes post_send reads and the responder writes.

import (
	"slices"

	"github.com/openmrc/mrc/control"
)

type region struct {
	handle uint32
	va     uint64
	rkey   uint32
	buf    []byte
	remote bool
}

func (a *Agent) regMR(p *control.RegMRParams) (any, error) {
	if p.Length == 0 || p.Length > maxMemory || a.memory+p.Length > maxMemory || len(a.mrs) >= maxMRs {
		return nil, control.Errorf(control.CodeResourceExhausted, "region of %d bytes: this peer holds at most %d bytes in %d regions", p.Length, maxMemory, maxMRs)
	}
	r := &region{handle: uint32(len(a.mrs) + 1), va: a.nextVA, buf: make([]byte, p.Length)}
	r.rkey = r.handle<<8 | 0x5A
	for _, f := range p.Access {
		switch f {
		case control.AccessRemoteWrite:
			r.remote = true
		case control.AccessLocalWrite:
		default:
			return nil, control.Errorf(control.CodeUnsupported, "access flag %q", f)
		}
	}
	a.nextVA += (p.Length + 0xFFFF) &^ 0xFFFF
	a.memory += p.Length
	a.mrs = append(a.mrs, r)
	return control.MR{MR: r.handle, VA: r.va, RKey: r.rkey, Length: p.Length}, nil
}

func (a *Agent) region(h uint32, off, n uint64) (*region, error) {
	if h == 0 || int(h) > len(a.mrs) {
		return nil, control.Errorf(control.CodeNotFound, "memory region %d", h)
	}
	r := a.mrs[h-1]
	if off > uint64(len(r.buf)) || n > uint64(len(r.buf))-off {
		return nil, control.Errorf(control.CodeInvalidArgument, "bytes %d..%d outside region %d of %d bytes", off, off+n, h, len(r.buf))
	}
	return r, nil
}

func (a *Agent) writeMR(p *control.WriteMRParams) (any, error) {
	r, err := a.region(p.MR, p.Offset, uint64(len(p.Data)))
	if err != nil {
		return nil, err
	}
	copy(r.buf[p.Offset:], p.Data)
	return control.Empty{}, nil
}

func (a *Agent) readMR(p *control.ReadMRParams) (any, error) {
	if p.Length > control.MaxData {
		return nil, control.Errorf(control.CodeInvalidArgument, "read of %d bytes, at most %d", p.Length, control.MaxData)
	}
	r, err := a.region(p.MR, p.Offset, p.Length)
	if err != nil {
		return nil, err
	}
	return control.ReadMRResult{Data: slices.Clone(r.buf[p.Offset : p.Offset+p.Length])}, nil
}

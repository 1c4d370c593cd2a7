package wire

import (
	"bytes"
	"errors"
	"testing"
)

// TestDecodeCut: a frame cut after its headers decodes from them, rebuilt
// to its length (every length field holds, the payload has its length);
// one cut within its headers, not cut, or longer than MaxCutLen decodes
// as DecodeInto decodes its bytes.
func TestDecodeCut(t *testing.T) {
	p := refWrite()
	frame, err := Default.Append(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	var whole Packet
	if err := Default.Decode(frame, &whole); err != nil {
		t.Fatal(err)
	}
	hdrs := len(frame) - 4096 - ICRCLen
	var buf []byte
	for _, n := range []int{hdrs, hdrs + 1, 128 + 40, len(frame) - 1} {
		var q Packet
		var e Error
		data, cut, err := Default.DecodeCut(frame[:n], len(frame), &buf, &q, &e)
		if err != nil || !cut || len(data) != len(frame) || !bytes.Equal(data[:n], frame[:n]) {
			t.Fatalf("cut at %d of %d: err %v, cut %v, %d bytes", n, len(frame), err, cut, len(data))
		}
		if q.BTH != whole.BTH || q.RETH != whole.RETH || q.METH != whole.METH || q.IP6 != whole.IP6 || q.UDP != whole.UDP || len(q.Payload) != 4096 {
			t.Errorf("cut at %d: headers %+v %+v, payload %d bytes; want the whole frame's", n, q.BTH, q.RETH, len(q.Payload))
		}
		if n == hdrs && cap(buf) > MaxCutLen {
			t.Errorf("rebuild buffer of %d bytes, more than MaxCutLen", cap(buf))
		}
	}
	for name, c := range map[string]struct {
		b      []byte
		length int
	}{
		"within the headers": {frame[:hdrs-1], len(frame)},
		"not cut":            {frame, len(frame)},
		"beyond MaxCutLen":   {frame[:hdrs], MaxCutLen + 1},
	} {
		var q, r Packet
		var e, f Error
		data, cut, err := Default.DecodeCut(c.b, c.length, &buf, &q, &e)
		want := Default.DecodeInto(c.b, &r, &f)
		if cut || len(data) != len(c.b) || (err == nil) != (want == nil) || q.BTH != r.BTH {
			t.Errorf("%s: cut %v, %d bytes, err %v; want DecodeInto's (%v) on the bytes", name, cut, len(data), err, want)
		}
		if name == "within the headers" && !errors.Is(err, ErrTruncated) {
			t.Errorf("%s: %v, want a truncated error", name, err)
		}
	}
	// A frame that does not decode for a reason in the bytes kept (a UDP
	// port not MRC's) has the whole frame's error, the frame rebuilt;
	// before, the cut frame failed as truncated.
	bad := bytes.Clone(frame)
	bad[whole.udpOff+2], bad[whole.udpOff+3] = 0x12, 0x34 // destination port 4660
	var q, r Packet
	var e, f Error
	want := Default.DecodeInto(bad, &r, &f)
	data, cut, err := Default.DecodeCut(bad[:hdrs], len(bad), &buf, &q, &e)
	if want == nil || err == nil || !cut || len(data) != len(bad) || e != f {
		t.Errorf("a UDP port not MRC's kept: cut %v, err %v; want the whole frame's %v", cut, err, want)
	}
	if !bytes.Equal(buf[hdrs:len(bad)], make([]byte, len(bad)-hdrs)) {
		t.Errorf("the rebuilt frame is not zeros past the cut")
	}
}

package conformance

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	"github.com/openmrc/mrc/pcap"
)

// lossFrames returns the frames of the `loss` scenario capture, their
// interfaces, and the indices of its resends of a payload seen whole
// before: (resend, original) pairs.
func lossFrames(t *testing.T) (frames []pcap.Frame, ifs []pcap.Interface, pairs [][2]int) {
	t.Helper()
	r, err := pcap.Open("../pcap/testdata/scenarios/loss.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := DefaultPICS()
	d := pcap.Decoder{Codec: p.Codec(), EVMode: p.EVModeValue()}
	type psnKey struct{ qp, psn uint32 }
	first := map[psnKey]int{}
	for {
		var f pcap.Frame
		if err := r.Next(&f); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		f.Data, f.Comments = bytes.Clone(f.Data), nil // they alias the Reader's chunks
		ifs = r.Interfaces()
		var rec pcap.Record
		d.Decode(&f, &ifs[f.Interface], &rec)
		q := &rec.Packet
		if rec.Err == nil && q.BTH.Opcode.IsWrite() && !q.Trimmed && len(q.Payload) > 0 {
			k := psnKey{q.BTH.DestQP, q.BTH.PSN}
			if o, seen := first[k]; !seen {
				first[k] = len(frames)
			} else if q.BTH.Retransmit {
				pairs = append(pairs, [2]int{len(frames), o})
			}
		}
		frames = append(frames, f)
	}
	if len(pairs) == 0 {
		t.Fatal("the loss capture has no resends")
	}
	return frames, ifs, pairs
}

// decodeFrame decodes frame f as the judge does.
func decodeFrame(t *testing.T, f *pcap.Frame, ifs []pcap.Interface) *pcap.Record {
	t.Helper()
	p := DefaultPICS()
	d := pcap.Decoder{Codec: p.Codec(), EVMode: p.EVModeValue()}
	rec := new(pcap.Record)
	d.Decode(f, &ifs[f.Interface], rec)
	if rec.Err != nil || !rec.ICRCOK {
		t.Fatalf("frame %d: decode error %v, ICRC good %v", f.Number, rec.Err, rec.ICRCOK)
	}
	return rec
}

// corruptPayload flips payload byte i (negative: from the end) of write
// frame f and gives it a good ICRC again, as a sender that resends other
// data would.
func corruptPayload(t *testing.T, f *pcap.Frame, ifs []pcap.Interface, i int) {
	t.Helper()
	rec := decodeFrame(t, f, ifs)
	q := &rec.Packet
	_, _, bth := q.Offsets()
	s := payloadStart(f.Data, q, bth)
	if s < 0 {
		t.Fatalf("frame %d: payload not found", f.Number)
	}
	if i < 0 {
		i += len(q.Payload)
	}
	f.Data[s+i] ^= 0x5a
	if err := DefaultPICS().Codec().Decode(f.Data, q); err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(f.Data[len(f.Data)-4:], DefaultPICS().Codec().ComputeICRC(f.Data, q))
	decodeFrame(t, f, ifs) // the ICRC is good again
}

// TestPayloadIdentity (REQ-PSN-2): the identity a PSN's first whole copy
// leaves (its ICRC and header bytes) matches a resend of the same payload
// under other headers (rtx set, another EV and timestamp), and no resend
// whose payload differs in its first, middle or last byte.
func TestPayloadIdentity(t *testing.T) {
	frames, ifs, pairs := lossFrames(t)
	e := newEngine(DefaultPICS())
	for _, pr := range pairs {
		rs, orig := &frames[pr[0]], &frames[pr[1]]
		var id payloadID
		id.keep(decodeFrame(t, orig, ifs))
		if id.hdrLen == 0 {
			t.Fatalf("frame %d: its headers did not fit the payload identity (hash fallback)", orig.Number)
		}
		if !e.samePayload(&id, decodeFrame(t, rs, ifs)) {
			t.Errorf("frame %d resends frame %d's payload: not recognised as the same", rs.Number, orig.Number)
		}
		if bytes.Equal(rs.Data, orig.Data) {
			t.Errorf("frame %d is a byte copy of frame %d: the test shows nothing", rs.Number, orig.Number)
		}
		for _, i := range []int{0, len(id.hdr) % id.n, -1} {
			bad := *rs
			bad.Data = bytes.Clone(rs.Data)
			corruptPayload(t, &bad, ifs, i)
			if e.samePayload(&id, decodeFrame(t, &bad, ifs)) {
				t.Errorf("frame %d with payload byte %d changed: taken for frame %d's payload", rs.Number, i, orig.Number)
			}
		}
	}
}

// TestResendOtherPayloadFails (REQ-PSN-2, planted bug): in the `loss`
// capture, every resend made to carry one other payload byte (with a good
// ICRC) fails MRC-REQ-PSN-002 with "a different payload"; unchanged, the
// case passes.
func TestResendOtherPayloadFails(t *testing.T) {
	frames, ifs, pairs := lossFrames(t)
	judge := func(fs []pcap.Frame) Result {
		var buf bytes.Buffer
		w, err := pcap.NewWriter(&buf, ifs...)
		if err != nil {
			t.Fatal(err)
		}
		for i := range fs {
			if err := w.WriteFrame(&fs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		r, err := pcap.NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Judge(r, "loss", Options{Today: testDay})
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range rep.Results {
			if res.Case.ID == "MRC-REQ-PSN-002" {
				return res
			}
		}
		t.Fatal("no MRC-REQ-PSN-002 result")
		return Result{}
	}
	if res := judge(frames); res.Verdict != Pass || res.Checked == 0 {
		t.Fatalf("unchanged: MRC-REQ-PSN-002 %s (%d checked), want PASS", res.Verdict, res.Checked)
	}
	for _, at := range []int{0, -1} {
		bad := make([]pcap.Frame, len(frames))
		copy(bad, frames)
		for _, pr := range pairs {
			f := &bad[pr[0]]
			f.Data = bytes.Clone(f.Data)
			corruptPayload(t, f, ifs, at)
		}
		res := judge(bad)
		found := false
		for _, f := range res.Findings {
			found = found || strings.Contains(f.Observed, "a different payload")
		}
		if res.Verdict != Fail || !found {
			t.Errorf("resends with payload byte %d changed: MRC-REQ-PSN-002 %s (%s), want FAIL with a different payload", at, res.Verdict, res.Reason)
		}
	}
}

// TestPayloadStartFoundOrScanned checks payloadStart, which takes the
// payload's offset from the distance between its address and the frame's,
// against a scan for the payload's address: on the loss capture's writes
// as decoded, with the frame's capacity cut, and with the payload copied
// out of the frame (not found).
func TestPayloadStartFoundOrScanned(t *testing.T) {
	frames, ifs, _ := lossFrames(t)
	scan := func(data []byte, p []byte, bth int) int {
		for i := bth + 12; i < len(data) && i <= bth+12+maxIDHeader; i++ {
			if &data[i] == &p[0] {
				return i
			}
		}
		return -1
	}
	n := 0
	for i := range frames {
		f := &frames[i]
		var rec pcap.Record
		p := DefaultPICS()
		(&pcap.Decoder{Codec: p.Codec(), EVMode: p.EVModeValue()}).Decode(f, &ifs[f.Interface], &rec)
		q := &rec.Packet
		if rec.Err != nil || !q.BTH.Opcode.IsWrite() || len(q.Payload) == 0 {
			continue
		}
		_, _, bth := q.Offsets()
		want := scan(f.Data, q.Payload, bth)
		if want < 0 {
			t.Fatalf("frame %d: the scan does not find the payload", f.Number)
		}
		if got := payloadStart(f.Data, q, bth); got != want {
			t.Fatalf("frame %d: payloadStart %d, scan %d", f.Number, got, want)
		}
		if got := payloadStart(f.Data[:len(f.Data)-1:len(f.Data)-1], q, bth); got != want {
			t.Fatalf("frame %d, capacity cut: payloadStart %d, scan %d", f.Number, got, want)
		}
		saved := q.Payload
		q.Payload = bytes.Clone(saved)
		if got := payloadStart(f.Data, q, bth); got != -1 {
			t.Fatalf("frame %d, payload copied out: payloadStart %d", f.Number, got)
		}
		q.Payload = saved
		if n++; n >= 2000 {
			break
		}
	}
	if n == 0 {
		t.Fatal("no write with a payload")
	}
}

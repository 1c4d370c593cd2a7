package pcap_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/openmrc/mrc/pcap"
)

type frameCopy struct {
	Number    int
	Timestamp time.Time
	Interface int
	Length    int
	Data      []byte
	Comments  []string
}

func readAll(t testing.TB, data []byte) ([]frameCopy, *pcap.Reader) {
	t.Helper()
	r, err := pcap.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out []frameCopy
	var f pcap.Frame
	for {
		err := r.Next(&f)
		if err == io.EOF {
			return out, r
		}
		if err != nil {
			t.Fatal(err)
		}
		fc := frameCopy{f.Number, f.Timestamp, f.Interface, f.Length, bytes.Clone(f.Data), nil}
		for _, c := range f.Comments {
			fc.Comments = append(fc.Comments, string(c))
		}
		out = append(out, fc)
	}
}

func gz(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func toPcap(t testing.TB, frames []frameCopy) []byte {
	var buf bytes.Buffer
	w, err := pcap.NewPcapWriter(&buf, pcap.LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		if err := w.WriteFrame(&pcap.Frame{Timestamp: f.Timestamp, Length: f.Length, Data: f.Data}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func corpusFile(t testing.TB, name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReaderAgreesWithPcapgo reads the corpus with Reader and with
// gopacket's independent pcapng reader and compares every frame: data,
// timestamp, interface and comments.
func TestReaderAgreesWithPcapgo(t *testing.T) {
	for _, name := range []string{"valid.pcapng", "malformed.pcapng"} {
		data := corpusFile(t, name)
		mine, rd := readAll(t, data)
		ng, err := pcapgo.NewNgReader(bytes.NewReader(data), pcapgo.NgReaderOptions{WantMixedLinkType: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			d, ci, opts, err := ng.ReadPacketDataWithOptions()
			if err == io.EOF {
				if i != len(mine) {
					t.Errorf("%s: pcapgo read %d frames, Reader %d", name, i, len(mine))
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			want := frameCopy{i + 1, ci.Timestamp, ci.InterfaceIndex, ci.Length, d, opts.Comments}
			if diff := cmp.Diff(want, mine[i]); diff != "" {
				t.Errorf("%s frame %d (-pcapgo +Reader):\n%s", name, i+1, diff)
			}
		}
		if n := len(rd.Interfaces()); n != 8 {
			t.Fatalf("%d interfaces, want 8", n)
		}
		for i, in := range rd.Interfaces() {
			want := pcap.InterfaceName([]string{"tx", "rx"}[i/4], i%4)
			if in.Name != want || in.Plane != i%4 || in.LinkType != pcap.LinkTypeEthernet {
				t.Errorf("interface %d = %+v, want %s on plane %d", i, in, want, i%4)
			}
		}
	}
}

// TestReaderFormats reads the same frames as pcapng, pcap and both
// gzip-compressed, and as a pcap in big-endian byte order.
func TestReaderFormats(t *testing.T) {
	ngData := corpusFile(t, "valid.pcapng")
	frames, _ := readAll(t, ngData)
	pcapData := toPcap(t, frames)
	strip := func(fs []frameCopy) []frameCopy {
		out := slicesClone(fs)
		for i := range out {
			out[i].Interface, out[i].Comments = 0, nil
		}
		return out
	}
	for name, tc := range map[string]struct {
		data   []byte
		format pcap.FileFormat
		want   []frameCopy
	}{
		"pcapng":    {ngData, pcap.FormatPcapNG, frames},
		"pcapng.gz": {gz(t, ngData), pcap.FormatPcapNG, frames},
		"pcap":      {pcapData, pcap.FormatPcap, strip(frames)},
		"pcap.gz":   {gz(t, pcapData), pcap.FormatPcap, strip(frames)},
		"pcap-be":   {bigEndianPcap(t, frames), pcap.FormatPcap, strip(frames)},
	} {
		got, r := readAll(t, tc.data)
		if r.Format() != tc.format {
			t.Errorf("%s: format %v, want %v", name, r.Format(), tc.format)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", name, diff)
		}
	}
}

func slicesClone(fs []frameCopy) []frameCopy { return append([]frameCopy(nil), fs...) }

// bigEndianPcap writes frames as a big-endian microsecond pcap, the
// byte order of captures made on big-endian hosts.
func bigEndianPcap(t testing.TB, frames []frameCopy) []byte {
	be := binary.BigEndian
	b := be.AppendUint32(nil, 0xa1b2c3d4)
	b = be.AppendUint16(b, 2)
	b = be.AppendUint16(b, 4)
	b = be.AppendUint64(b, 0)
	b = be.AppendUint32(b, 65535)
	b = be.AppendUint32(b, 1)
	for _, f := range frames {
		if f.Timestamp.Nanosecond()%1000 != 0 {
			t.Fatal("frame time below a microsecond")
		}
		b = be.AppendUint32(b, uint32(f.Timestamp.Unix()))
		b = be.AppendUint32(b, uint32(f.Timestamp.Nanosecond()/1000))
		b = be.AppendUint32(b, uint32(len(f.Data)))
		b = be.AppendUint32(b, uint32(f.Length))
		b = append(b, f.Data...)
	}
	return b
}

// ngBlock builds a pcapng block in the given byte order.
func ngBlock(order binary.AppendByteOrder, typ uint32, body []byte) []byte {
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	n := uint32(12 + len(body))
	b := order.AppendUint32(nil, typ)
	b = order.AppendUint32(b, n)
	b = append(b, body...)
	return order.AppendUint32(b, n)
}

func ngOption(order binary.AppendByteOrder, code uint16, v []byte) []byte {
	b := order.AppendUint16(nil, code)
	b = order.AppendUint16(b, uint16(len(v)))
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func ngSHB(order binary.AppendByteOrder) []byte {
	body := order.AppendUint32(nil, 0x1A2B3C4D)
	body = order.AppendUint16(body, 1)
	body = order.AppendUint16(body, 0)
	body = order.AppendUint64(body, ^uint64(0))
	return ngBlock(order, 0x0A0D0D0A, body)
}

func ngIDB(order binary.AppendByteOrder, snap uint32, opts ...[]byte) []byte {
	body := order.AppendUint16(nil, 1)
	body = order.AppendUint16(body, 0)
	body = order.AppendUint32(body, snap)
	for _, o := range opts {
		body = append(body, o...)
	}
	return ngBlock(order, 1, body)
}

func ngEPB(order binary.AppendByteOrder, iface uint32, ts uint64, data []byte, opts ...[]byte) []byte {
	body := order.AppendUint32(nil, iface)
	body = order.AppendUint32(body, uint32(ts>>32))
	body = order.AppendUint32(body, uint32(ts))
	body = order.AppendUint32(body, uint32(len(data)))
	body = order.AppendUint32(body, uint32(len(data)))
	body = append(body, data...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	for _, o := range opts {
		body = append(body, o...)
	}
	return ngBlock(order, 6, body)
}

// TestReaderPcapngDetails covers what pcapgo's writer never produces:
// big-endian sections, binary and decimal timestamp resolutions, the
// timestamp offset, simple and obsolete packet blocks, unknown blocks,
// a second section, and two comments on one packet.
func TestReaderPcapngDetails(t *testing.T) {
	be := binary.BigEndian
	le := binary.LittleEndian
	frame := []byte("0123456789abcdef")
	var file []byte
	file = append(file, ngSHB(be)...)
	file = append(file, ngIDB(be, 0, ngOption(be, 2, []byte("rx/plane7")), ngOption(be, 9, []byte{0x80 | 20}),
		ngOption(be, 14, be.AppendUint64(nil, 100)))...)
	file = append(file, ngBlock(be, 0x0BAD, []byte("unknown block"))...)
	// 3.5 s in 2^-20 units, plus the 100 s offset.
	file = append(file, ngEPB(be, 0, 7<<19, frame, ngOption(be, 1, []byte("first")), ngOption(be, 1, []byte("second")), ngOption(be, 0, nil))...)
	// A simple packet block: no timestamp, always interface 0.
	spb := be.AppendUint32(nil, uint32(len(frame)))
	spb = append(spb, frame...)
	file = append(file, ngBlock(be, 3, spb)...)
	// A new little-endian section resets the interfaces.
	file = append(file, ngSHB(le)...)
	file = append(file, ngIDB(le, 4, ngOption(le, 9, []byte{3}))...)
	opb := le.AppendUint16(nil, 0)
	opb = le.AppendUint16(opb, 0)
	opb = le.AppendUint32(opb, 0)
	opb = le.AppendUint32(opb, 1234)
	opb = le.AppendUint32(opb, 4)
	opb = le.AppendUint32(opb, 16)
	opb = append(opb, frame[:4]...)
	file = append(file, ngBlock(le, 2, opb)...)

	got, r := readAll(t, file)
	want := []frameCopy{
		{1, time.Unix(103, 500000000).UTC(), 0, 16, frame, []string{"first", "second"}},
		{2, time.Time{}, 0, 16, frame, nil},
		{3, time.Unix(1, 234000000).UTC(), 0, 16, frame[:4], nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if in := r.Interface(0); in == nil || in.SnapLen != 4 || in.Plane != -1 {
		t.Errorf("second section interface = %+v", in)
	}
}

// TestReaderErrors checks that malformed files give typed errors, and
// that no length field makes the reader allocate beyond the input.
func TestReaderErrors(t *testing.T) {
	le := binary.LittleEndian
	valid := corpusFile(t, "valid.pcapng")
	huge := append(ngSHB(le), le.AppendUint32(le.AppendUint32(nil, 6), 0xFFFFFFF0)...)
	for name, tc := range map[string]struct {
		data    []byte
		atOpen  bool
		wantErr error
	}{
		"empty":            {nil, true, pcap.ErrUnknownFormat},
		"text":             {[]byte("hello, world\n"), true, pcap.ErrUnknownFormat},
		"gzip of nothing":  {gz(t, nil), true, pcap.ErrUnknownFormat},
		"cut mid-block":    {valid[:len(valid)-10], false, io.ErrUnexpectedEOF},
		"huge block":       {huge, false, nil},
		"no such iface":    {append(ngSHB(le), ngEPB(le, 3, 0, []byte("x"))...), false, nil},
		"trailer mismatch": {append(ngSHB(le), 6, 0, 0, 0, 12, 0, 0, 0, 16, 0, 0, 0), false, nil},
		"short pcap hdr":   {[]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0}, true, io.ErrUnexpectedEOF},
		"pcap huge record": {append(toPcap(t, nil), make([]byte, 8)...)[:24:24], false, nil},
	} {
		t.Run(name, func(t *testing.T) {
			data := tc.data
			if name == "pcap huge record" {
				data = append(bytes.Clone(data), 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f)
			}
			r, err := pcap.NewReader(bytes.NewReader(data))
			if tc.atOpen {
				if err == nil {
					t.Fatal("NewReader accepted it")
				}
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var f pcap.Frame
			for {
				err = r.Next(&f)
				if err != nil {
					break
				}
			}
			var fe *pcap.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T), want a *FormatError", err, err)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
		})
	}
}

// TestReaderNoAllocs checks the reader's promise: no allocation per frame,
// comments included.
func TestReaderNoAllocs(t *testing.T) {
	frames, _ := readAll(t, corpusFile(t, "valid.pcapng"))
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, pcap.Interface{Point: "tx", Plane: 0})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i++ {
		f := frames[i%len(frames)]
		if err := w.WritePacket(f.Timestamp, 0, f.Data, "c"); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	br := bytes.NewReader(data)
	r, err := pcap.NewReader(br)
	if err != nil {
		t.Fatal(err)
	}
	var f pcap.Frame
	_ = r.Next(&f) // let the comment slice reach its size
	allocs := testing.AllocsPerRun(1000, func() {
		if err := r.Next(&f); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per frame, want 0", allocs)
	}
}

// TestWriterRoundTrip writes frames with comments on several interfaces
// and reads them back.
func TestWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, pcap.Interface{Point: "nic-a", Plane: 0}, pcap.Interface{Name: "custom", Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 5, 5, 1, 2, 3, 456789012, time.UTC)
	if err := w.WritePacket(ts, 1, []byte("abc"), "verdict: pass", "second"); err != nil {
		t.Fatal(err)
	}
	if err := w.WritePacket(ts, 2, []byte("x")); err == nil {
		t.Error("a frame on an undeclared interface was accepted")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got, r := readAll(t, buf.Bytes())
	want := []frameCopy{{1, ts, 1, 3, []byte("abc"), []string{"verdict: pass", "second"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if in := r.Interface(0); in.Name != "nic-a/plane0" || in.Point != "nic-a" || in.Plane != 0 {
		t.Errorf("interface 0 = %+v", in)
	}
	if in := r.Interface(1); in.Name != "custom" || in.Plane != -1 || in.Description != "d" {
		t.Errorf("interface 1 = %+v", in)
	}
	pw, _ := pcap.NewPcapWriter(io.Discard, 0, 0)
	if err := pw.WritePacket(ts, 0, []byte("x"), "no"); !errors.Is(err, pcap.ErrNoComments) {
		t.Errorf("comment on a pcap file: %v, want ErrNoComments", err)
	}
}

func TestParseInterfaceName(t *testing.T) {
	for name, want := range map[string]struct {
		point string
		plane int
	}{
		"tx/plane3": {"tx", 3}, "a/b/plane12": {"a/b", 12}, "eth0": {"eth0", -1}, "x/plane": {"x/plane", -1},
		"x/plane-1": {"x/plane-1", -1}, "x/plane+1": {"x/plane+1", -1}, "/plane0": {"", 0},
	} {
		p, n := pcap.ParseInterfaceName(name)
		if p != want.point || n != want.plane {
			t.Errorf("ParseInterfaceName(%q) = %q, %d; want %q, %d", name, p, n, want.point, want.plane)
		}
	}
}

// TestReaderTimestampResolutions: every decimal if_tsresol (10^0 to
// 10^-19, nanoseconds and microseconds on their own constant-divisor path)
// and binary ones give the time an exact rational computation gives,
// truncated to the nanosecond.
func TestReaderTimestampResolutions(t *testing.T) {
	ticks := []uint64{0, 1, 999, 1_000_000, 1_234_567_891_234, 1<<63 - 1, ^uint64(0)}
	for v := 0; v <= 19; v++ {
		units := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(v)), nil)
		for _, k := range ticks {
			checkTimestamp(t, uint8(v), k, units)
		}
	}
	for _, s := range []uint8{0, 1, 20, 30, 34, 40, 63} {
		units := new(big.Int).Lsh(big.NewInt(1), uint(s))
		for _, k := range ticks {
			checkTimestamp(t, 0x80|s, k, units)
		}
	}
}

func checkTimestamp(t *testing.T, tsresol uint8, ticks uint64, units *big.Int) {
	t.Helper()
	sec, frac := new(big.Int).DivMod(new(big.Int).SetUint64(ticks), units, new(big.Int))
	nsec := new(big.Int).Div(frac.Mul(frac, big.NewInt(1e9)), units)
	want := time.Unix(int64(sec.Uint64()), nsec.Int64()).UTC()
	if got := pcap.Timestamp(tsresol, ticks); !got.Equal(want) {
		t.Errorf("if_tsresol 0x%02x, %d ticks: %v, want %v", tsresol, ticks, got, want)
	}
}

package pcap_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/internal/testenv"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/pcap/internal/corpus"
)

// matching returns the numbers of the frames of capture that expr selects.
func matching(t testing.TB, capture, expr string) []int {
	t.Helper()
	f, err := pcap.CompileFilter(expr, nil)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	rd, err := pcap.Open(capture)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var got []int
	var d pcap.Decoder
	if err := d.Each(rd, func(r *pcap.Record) error {
		if f.Match(r) {
			got = append(got, r.Number)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestFilterSelects pins what a few filters select in the corpus, so a
// change of semantics shows here even without tshark.
func TestFilterSelects(t *testing.T) {
	valid := filepath.Join("testdata", "valid.pcapng")
	for _, tc := range []struct {
		expr string
		want []int
	}{
		{"mrc.bth.opcode == RDMA_WRITE_ONLY", []int{4, 13, 14, 16}},
		{`mrc.bth.opcode == "rdma_write_only"`, []int{4, 13, 14, 16}},
		{"mrc.bth.opcode == 0xca", []int{4, 13, 14, 16}},
		{"mrc.bth.opcode eq 202 and not mrc.bth.opcode != 202", []int{4, 13, 14, 16}},
		{"frame.number == 1 || frame.number == 2 && frame.number == 3", []int{1}},
		{"frame.number == 3 && frame.number == 2 || frame.number == 1", []int{1}},
		{"frame.number == 010", []int{8}}, // octal, as tshark reads it
		{"mrc.bth.psn >= 0x100", []int{30, 31, 32}},
		{"mrc.payload_len == 16", []int{5}},
		{"mrc.bth.psn == mrc.seth.cack_psn", []int{18, 19, 20, 21}},
		{"10.0.0.1 == ip.src", []int{1, 2, 3, 10, 11, 13, 16, 29}},
	} {
		if got := matching(t, valid, tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("%s: frames %v, want %v", tc.expr, got, tc.want)
		}
	}
}

// tsharkExprs are checked against tshark with the generated dissector:
// they cover every operator, header and frame fields, presence, value
// names, addresses and prefixes, fields absent from most frames, and
// link-header fields of each protocol wire.LinkHeaders describes.
var tsharkExprs = []string{
	"mrc",
	"mrc.bth.psn == 5",
	"mrc.bth.psn != 5",
	"!(mrc.bth.psn == 5)",
	"mrc.bth.psn >= 200 && mrc.bth.psn < 202 || mrc.seth",
	"mrc.ev == 0xc0de && mrc.bth.ack_req == 1",
	"mrc.ev > 0xffff",
	"mrc.bth.opcode == RELIABILITY_NACK or mrc.neth.nack_reason <= 2",
	"mrc.seth.sack_offset < 0 || mrc.seth.sack_bitmap != 0",
	"mrc.trimmed != 0",
	"mrc.payload_len > 0 && !mrc.pad",
	"mrc.icrc_ok == 0",
	`mrc.req == "WIRE-BTH-9" || mrc.req == "WIRE-GEN-2"`,
	"mrc.req",
	"mrc.tseth || mrc.reth.dma_length > 16",
	"ipv6.addr == fd00::/16 && udp.srcport == 0xa0de",
	"ip.dst == 10.0.0.2 and eth.src == 02:00:00:00:00:0a",
	"mrc.bth.psn == mrc.seth.cack_psn",
	"frame.len > 100 and not ip",
	"ip.addr != 10.0.0.1 || udp.port != 4791",
	"eth.addr == 02:00:00:00:00:0b && ipv6.dst != fd00::b",
	"eth.type == 0x8100",
	"vlan.etype == 0x86dd || ipv6.routing.segleft == 1",
	"ipv6.tclass.dscp == 46 || ip.len > 1000 && ip.version == 4",
	"ipv6.flow != 0 && ipv6.plen > 100 || ipv6.nxt == 43",
	"ip.id != 0 || udp.checksum != 0 || ip.checksum > 0x8000",
	"vlan || ipv6.hlim < 64 || ipv6.routing.srh.last_entry == 0",
}

// tsharkTakesMore lists the frames whose IP or UDP header wire rejects
// (a length beyond the frame, an SRH that is no SRH) but Wireshark
// dissects, so its MRC dissector runs and shows mrc and mrc.req while
// decode has no MRC layer: the filters' only known difference.
var tsharkTakesMore = map[string][]int{"malformed": {3, 4, 42, 43}}

// TestFilterAgreesWithTshark checks that CompileFilter selects the frames
// tshark -Y selects with the generated dissector, for each of tsharkExprs
// on the corpus and three simulator captures. To cost one tshark run per
// capture rather than one per expression, the capture is rewritten with
// frame n at n-1 ms and tshark counts each expression's frames per 1 ms
// interval (-z io,stat), which gives the set of frames it selects.
func TestFilterAgreesWithTshark(t *testing.T) {
	tshark := testenv.LookPath(t, "tshark")
	captures := []string{filepath.Join("testdata", "valid.pcapng"), filepath.Join("testdata", "malformed.pcapng")}
	for _, s := range []string{"trim", "loss", "plane-down"} {
		captures = append(captures, filepath.Join(corpus.ScenarioDir, s+".pcapng"))
	}
	for _, e := range tsharkExprs {
		if strings.Contains(e, ",") {
			t.Fatalf("%q: io,stat separates expressions with commas", e)
		}
	}
	agree, runs := 0, 0
	some, notAll := make([]bool, len(tsharkExprs)), make([]bool, len(tsharkExprs))
	for _, c := range captures {
		name := strings.TrimSuffix(filepath.Base(c), ".pcapng")
		retimed := filepath.Join(t.TempDir(), name+".pcapng")
		n := retime(t, c, retimed)
		sel, err := tsharkSelect(tshark, retimed, n, tsharkExprs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, e := range tsharkExprs {
			runs++
			got := slices.DeleteFunc(matching(t, retimed, e), func(f int) bool {
				return f == n+1 || slices.Contains(tsharkTakesMore[name], f)
			})
			want := slices.DeleteFunc(sel[i], func(f int) bool { return slices.Contains(tsharkTakesMore[name], f) })
			some[i] = some[i] || len(want) > 0
			notAll[i] = notAll[i] || len(want) < n
			if !slices.Equal(got, want) {
				t.Errorf("%s: -Y %q: decode selects %v, tshark %v", name, e, got, sel[i])
				continue
			}
			agree++
		}
	}
	for i, e := range tsharkExprs {
		if !some[i] || !notAll[i] {
			t.Errorf("%q selects no frame or every frame of every capture: it tells nothing", e)
		}
	}
	t.Logf("%d of %d (capture, expression) pairs select the same frames as tshark", agree, runs)
}

// retime copies capture to out with frame n stamped at n-1 ms, followed by
// one frame of zeros, and returns the number of frames copied.
func retime(t *testing.T, capture, out string) int {
	t.Helper()
	rd, err := pcap.Open(capture)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	type fr struct {
		pcap.Frame
		data []byte
	}
	var frames []fr
	for {
		var f pcap.Frame
		if err := rd.Next(&f); err != nil {
			if err == io.EOF {
				break
			}
			t.Fatal(err)
		}
		frames = append(frames, fr{f, slices.Clone(f.Data)})
	}
	var b bytes.Buffer
	w, err := pcap.NewWriter(&b, rd.Interfaces()...)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range frames {
		f := frames[i].Frame
		f.Data, f.Comments = frames[i].data, nil
		f.Timestamp = base.Add(time.Duration(i) * time.Millisecond)
		if err := w.WriteFrame(&f); err != nil {
			t.Fatal(err)
		}
	}
	// io,stat leaves out the interval that starts at the last frame: a
	// frame of zeros closes the last real one.
	if err := w.WritePacket(base.Add(time.Duration(len(frames))*time.Millisecond), 0, make([]byte, 60)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return len(frames)
}

// tsharkSelect returns, for each expression, the frames tshark selects
// in a capture of n frames 1 ms apart.
func tsharkSelect(tshark, capture string, n int, exprs []string) ([][]int, error) {
	cmd := exec.Command(tshark, "-n", "-q", "-X", "lua_script:"+corpus.LuaPath, "-r", capture,
		"-z", "io,stat,0.001,"+strings.Join(exprs, ","))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, stderr.String())
	}
	sel := make([][]int, len(exprs))
	row := 0
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.Contains(l, "<>") {
			continue
		}
		cols := strings.Split(strings.Trim(l, "| "), "|")
		if len(cols) != 1+2*len(exprs) {
			return nil, fmt.Errorf("io,stat row %q: %d columns, want %d", l, len(cols), 1+2*len(exprs))
		}
		if row++; row > n {
			break
		}
		for i := range exprs {
			k, err := strconv.Atoi(strings.TrimSpace(cols[1+2*i]))
			if err != nil || k > 1 {
				return nil, fmt.Errorf("io,stat row %q: frames column %q", l, cols[1+2*i])
			}
			if k == 1 {
				sel[i] = append(sel[i], row)
			}
		}
	}
	if row < n {
		return nil, fmt.Errorf("io,stat printed %d intervals for %d frames", row, n)
	}
	return sel, nil
}

// records decodes every frame of the corpus into its own Record.
func records(t testing.TB) []*pcap.Record {
	t.Helper()
	var recs []*pcap.Record
	for _, name := range []string{"valid", "malformed"} {
		rd, err := pcap.Open(filepath.Join("testdata", name+".pcapng"))
		if err != nil {
			t.Fatal(err)
		}
		var d pcap.Decoder
		for {
			var f pcap.Frame
			if err := rd.Next(&f); err != nil {
				if err != io.EOF {
					t.Fatal(err)
				}
				break
			}
			f.Data = slices.Clone(f.Data)
			r := new(pcap.Record)
			d.Decode(&f, rd.Interface(f.Interface), r)
			recs = append(recs, r)
		}
		rd.Close()
	}
	return recs
}

// allFieldsExpr uses every kind of field and operator.
const allFieldsExpr = `(mrc.bth.psn == 5 && mrc.ev != 0x10001 || mrc.seth.sack_offset < -1) && !(mrc.req == "WIRE-LEN-1") ` +
	`|| ipv6.addr == fd00::/16 && ip.src == 10.0.0.1 || eth.addr == 02:00:00:00:00:0a && mrc.icrc_ok == 1 ` +
	`|| mrc.bth.psn >= mrc.seth.cack_psn || mrc.neth && mrc.payload_len > 3 && mrc.icrc_computed != mrc.icrc`

// TestFilterMatchAllocatesNothing evaluates a filter that reads every
// kind of field over the whole corpus without allocating.
func TestFilterMatchAllocatesNothing(t *testing.T) {
	f, err := pcap.CompileFilter(allFieldsExpr, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs := records(t)
	n := 0
	if a := testing.AllocsPerRun(20, func() {
		n = 0
		for _, r := range recs {
			if f.Match(r) {
				n++
			}
		}
	}); a != 0 {
		t.Errorf("Match allocates %.1f times per corpus pass", a)
	}
	if n == 0 || n == len(recs) {
		t.Errorf("the filter selects %d of %d frames: it exercises too little", n, len(recs))
	}
}

// TestFilterNormalForm checks that String is a fixed point and that the
// normal form selects the same frames as the expression.
func TestFilterNormalForm(t *testing.T) {
	recs := records(t)
	for _, e := range append(slices.Clone(tsharkExprs), allFieldsExpr, "mrc.bth.opcode == RDMA_WRITE_ONLY",
		"5 < mrc.bth.psn", `mrc.req eq "a\"b"`, "not not mrc") {
		f, err := pcap.CompileFilter(e, nil)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		g, err := pcap.CompileFilter(f.String(), nil)
		if err != nil {
			t.Fatalf("normal form %q of %q does not compile: %v", f.String(), e, err)
		}
		if g.String() != f.String() {
			t.Errorf("normal form of %q is %q, and of that %q", e, f.String(), g.String())
		}
		for _, r := range recs {
			if f.Match(r) != g.Match(r) {
				t.Errorf("%q and its normal form %q differ on frame %d", e, f.String(), r.Number)
			}
		}
	}
}

// TestFilterNormalFormDepth: the normal form of an expression within
// MaxFilterDepth compiles too (FuzzFilter found a run of 65 ||s written
// flat whose fully parenthesized normal form nested 65 deep), and keeps
// the parentheses precedence needs.
func TestFilterNormalFormDepth(t *testing.T) {
	run := strings.Repeat("mrc.bth.psn == 1 || ", 2*pcap.MaxFilterDepth) + "mrc"
	deep := strings.Repeat("!", pcap.MaxFilterDepth) + "mrc.bth.psn == 1"
	right := strings.Repeat("mrc || (", pcap.MaxFilterDepth) + "mrc" + strings.Repeat(")", pcap.MaxFilterDepth)
	for _, e := range []string{run, deep, right, strings.ReplaceAll(run, "||", "&&")} {
		f, err := pcap.CompileFilter(e, nil)
		if err != nil {
			t.Fatalf("%.60q: %v", e, err)
		}
		if _, err := pcap.CompileFilter(f.String(), nil); err != nil {
			t.Errorf("normal form %.60q of %.60q does not compile: %v", f.String(), e, err)
		}
	}
	for e, want := range map[string]string{
		"(mrc || udp) && mrc.bth.psn == 1":   "(mrc || udp) && mrc.bth.psn == 1",
		"!(mrc && udp) || !mrc.bth.psn == 1": "!(mrc && udp) || !mrc.bth.psn == 1",
		"mrc || udp && mrc.bth.psn == 1":     "mrc || udp && mrc.bth.psn == 1",
		"((mrc && udp) && (mrc || udp))":     "mrc && udp && (mrc || udp)",
	} {
		f, err := pcap.CompileFilter(e, nil)
		if err != nil {
			t.Fatalf("%q: %v", e, err)
		}
		if f.String() != want {
			t.Errorf("normal form of %q is %q, want %q", e, f.String(), want)
		}
	}
}

// TestFilterErrors checks that a bad expression gets a typed error at the
// column of the problem.
func TestFilterErrors(t *testing.T) {
	for _, tc := range []struct {
		expr string
		kind error
		col  int
		msg  string
	}{
		{"", pcap.ErrFilterSyntax, 1, "empty"},
		{"mrc.bth.pns == 5", pcap.ErrFilterField, 1, "did you mean mrc.bth.psn?"},
		{"mrc.bth.psn == 5 && mrc.evv > 1", pcap.ErrFilterField, 21, "mrc.ev?"},
		{"mrc.bth.psn = 5", pcap.ErrFilterSyntax, 13, "write =="},
		{"mrc.bth.psn == 5 & mrc", pcap.ErrFilterSyntax, 18, "&&"},
		{"mrc.bth.psn == 0x1000000", pcap.ErrFilterValue, 16, "24-bit"},
		{"mrc.bth.psn == -1", pcap.ErrFilterValue, 16, "unsigned"},
		{"mrc.seth.sack_offset == -40000", pcap.ErrFilterValue, 25, "16-bit signed"},
		{"mrc.bth.psn == RDMA_WRITE_ONLY", pcap.ErrFilterValue, 16, "no value names"},
		{"mrc.bth.opcode == RDMA_WRITE_SOMETIMES", pcap.ErrFilterValue, 19, "no such value name"},
		{"(mrc.bth.psn == 5", pcap.ErrFilterSyntax, 18, "missing ) for the ( at column 1"},
		{"mrc.bth.psn == 5)", pcap.ErrFilterSyntax, 17, `unexpected ")"`},
		{"mrc.bth.psn ==", pcap.ErrFilterSyntax, 15, "ends"},
		{"ip.src == fd00::1", pcap.ErrFilterValue, 11, "IPv4 address"},
		{"ip.src > 10.0.0.1", pcap.ErrFilterType, 8, "not ordered"},
		{"eth.src == 02:00:00", pcap.ErrFilterValue, 12, "Ethernet"},
		{"mrc.seth == 1", pcap.ErrFilterType, 13, "presence"},
		{"mrc.ev == ip.src", pcap.ErrFilterType, 11, "different kinds"},
		{`mrc.req == "WIRE`, pcap.ErrFilterSyntax, 12, "unterminated"},
		{"mrc.bth.psn == 5 $", pcap.ErrFilterSyntax, 18, "unexpected character"},
		{"5 == 6", pcap.ErrFilterField, 1, "not a field"},
		{strings.Repeat("(", pcap.MaxFilterDepth+1) + "mrc" + strings.Repeat(")", pcap.MaxFilterDepth+1), pcap.ErrFilterLimit, pcap.MaxFilterDepth + 1, "nested"},
		{strings.Repeat("!", pcap.MaxFilterDepth+1) + "mrc", pcap.ErrFilterLimit, pcap.MaxFilterDepth + 1, "nested"},
		{strings.Repeat("mrc || ", pcap.MaxFilterLen/7) + "mrc", pcap.ErrFilterLimit, pcap.MaxFilterLen + 1, "at most"},
	} {
		_, err := pcap.CompileFilter(tc.expr, nil)
		var fe *pcap.FilterError
		if !errors.As(err, &fe) {
			t.Errorf("%.40q: error %v, want a *FilterError", tc.expr, err)
			continue
		}
		if !errors.Is(err, tc.kind) || fe.Col != tc.col || !strings.Contains(fe.Msg, tc.msg) {
			t.Errorf("%.40q: %v (column %d), want %v at column %d saying %q", tc.expr, err, fe.Col, tc.kind, tc.col, tc.msg)
		}
	}
}

// BenchmarkFilterMatch measures Match per frame over the corpus, beside
// decoding the frame (the cost the filter adds to decode -Y).
func BenchmarkFilterMatch(b *testing.B) {
	recs := records(b)
	for _, bc := range []struct{ name, expr string }{
		{"psn", "mrc.bth.psn == 5"},
		{"typical", "mrc.bth.psn == 5 && mrc.ev == 0x10001"},
		{"all", allFieldsExpr},
	} {
		f, err := pcap.CompileFilter(bc.expr, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				f.Match(recs[i%len(recs)])
			}
		})
	}
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		var d pcap.Decoder
		var r pcap.Record
		for i := 0; i < b.N; i++ {
			d.Decode(&recs[i%len(recs)].Frame, recs[i%len(recs)].Iface, &r)
		}
	})
}

package wire

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestLazyMessageAsFmt: an error DecodeInto wrote formats its message
// (Message, AppendMessage, Error) as fmt.Sprintf would the same format and
// operands, for every format the decoder uses, over small, large and
// negative operands.
func TestLazyMessageAsFmt(t *testing.T) {
	formats := []string{
		"need %d bytes, have %d",
		"EtherType 0x%04x is neither IPv4 nor IPv6",
		"version %d, want 4",
		"IHL %d: IPv4 options are not used by MRC",
		"total length %d, frame has %d bytes from the IP header",
		"protocol %d, want UDP (17)",
		"version %d, want 6",
		"payload length %d, frame has %d bytes after the IPv6 header",
		"next header %d, want UDP (17), IPv6 (41) or routing (43)",
		"inner next header %d, want UDP (17)",
		"routing type %d, want 4 (SRH)",
		"%d segments, at most %d",
		"hdr ext len %d, want %d for %d segments and no TLVs",
		"next header %d, want IPv6 (41)",
		"length %d, IP datagram leaves %d bytes",
		"destination port %d is not MRC under profile %q",
		"opcode 0x%02X is not an MRC opcode",
		"pad count %d exceeds the %d payload bytes",
		"100%% of %d",
	}
	values := []int{0, 1, 7, 10, 0xab, 255, 256, 0xABCD, 65535, 1 << 20, -1, -12, -0xabc, math.MaxInt, math.MinInt}
	for _, f := range formats {
		for i, v := range values {
			a := []int{v, values[(i+3)%len(values)], values[(i+5)%len(values)]}
			q := `openmrc "x"`
			var p Packet
			p.errTo = new(Error)
			e := p.errAtQ(ErrInvalid, "BTH", 3, "f", ReqBTH2, f, q, a...)
			var want string
			if n := countVerbs(f); f == formats[15] {
				want = fmt.Sprintf(f, a[0], q)
			} else {
				args := make([]any, n)
				for j := range args {
					args[j] = a[j]
				}
				want = fmt.Sprintf(f, args...)
			}
			if got := e.Message(); got != want {
				t.Errorf("%q with %v: %q, want %q", f, a, got, want)
			}
			if got := string(e.AppendMessage([]byte("x"))); got != "x"+want {
				t.Errorf("AppendMessage: %q, want %q", got, "x"+want)
			}
			eager := (&Packet{}).errAtQ(ErrInvalid, "BTH", 3, "f", ReqBTH2, f, q, a...)
			if eager.Msg != want || eager.Error() != e.Error() {
				t.Errorf("%q: Decode's error %q (Msg %q), DecodeInto's %q", f, eager.Error(), eager.Msg, e.Error())
			}
		}
	}
}

func countVerbs(f string) int {
	n := 0
	for i := 0; i < len(f)-1; i++ {
		if f[i] == '%' {
			if f[i+1] == '%' {
				i++
				continue
			}
			n++
		}
	}
	return n
}

// TestDecodeIntoAsDecode: for frames of every shape and their mutations,
// DecodeInto gives Decode's packet and an error with Decode's fields and
// text, and on the frames that fail it allocates nothing.
func TestDecodeIntoAsDecode(t *testing.T) {
	for _, c := range fastCodecs(t) {
		var bad [][]byte
		for _, f := range fastFrames(t, c) {
			for _, m := range mutations(f) {
				var p1, p2 Packet
				var e Error
				e1, e2 := c.Decode(m, &p1), c.DecodeInto(m, &p2, &e)
				if (e1 == nil) != (e2 == nil) {
					t.Fatalf("%x\nDecode error %v\nDecodeInto error %v", m, e1, e2)
				}
				if !samePacket(&p1, &p2) {
					t.Fatalf("%x: DecodeInto's packet differs from Decode's", m)
				}
				if e1 == nil {
					continue
				}
				w1 := e1.(*Error)
				if e2 != error(&e) || w1.Error() != e.Error() || w1.Msg != e.Message() || e.Msg != "" ||
					w1.Kind != e.Kind || w1.Header != e.Header || w1.Offset != e.Offset || w1.Field != e.Field || w1.Req != e.Req {
					t.Fatalf("%x\nDecode error %#v\nDecodeInto error %#v", m, w1, e2)
				}
				bad = append(bad, m)
			}
		}
		if len(bad) == 0 {
			t.Fatal("no mutation fails to decode")
		}
		var p Packet
		var e Error
		if a := testing.AllocsPerRun(10, func() {
			for _, m := range bad {
				_ = c.DecodeInto(m, &p, &e)
			}
		}); a != 0 {
			t.Errorf("%s: DecodeInto of %d malformed frames: %.1f allocations, want 0", c.prof.Name, len(bad), a)
		}
	}
}

// TestViolationMessageAsFmt: a Violation Check wrote formats its message
// (Message, AppendMessage, String) as fmt.Sprintf would the same format
// with the operands' own types (an Opcode for %s, a bool for %v, a uint64
// for the reserved bits), for every format check.go passes to violations.add.
func TestViolationMessageAsFmt(t *testing.T) {
	formats := checkFormats(t)
	if len(formats) < 30 {
		t.Fatalf("%d formats found in check.go, want at least 30", len(formats))
	}
	values := []int{0, 1, 2, 7, 10, 0xab, 255, 256, 0xABCD, 65535, 1 << 20, 0xFFFFFF, -1, -12, math.MaxInt}
	for _, f := range formats {
		verbs := formatVerbs(f)
		for i := range values {
			var v Violation
			v.msg.format = f
			args := make([]any, len(verbs))
			for j, verb := range verbs {
				x := values[(i+3*j)%len(values)]
				v.msg.ints[j] = x
				switch {
				case verb == 's':
					x &= 0xFF
					v.msg.ints[j], args[j] = x, Opcode(x)
				case verb == 'v':
					args[j] = x != 0
				case f == "reserved bits set (0x%x)":
					v.msg.uns |= 1 << j
					args[j] = uint64(x)
				default:
					args[j] = x
				}
			}
			v.msg.n = int8(len(verbs))
			want := fmt.Sprintf(f, args...)
			if got := v.Message(); got != want {
				t.Errorf("%q with %v: %q, want %q", f, args, got, want)
			}
			if got := string(v.AppendMessage([]byte("x"))); got != "x"+want {
				t.Errorf("AppendMessage: %q, want %q", got, "x"+want)
			}
			if got, w := v.String(), fmt.Sprintf("%s: %s at offset %d field %s: %s", v.Req, v.Header, v.Offset, v.Field, want); got != w {
				t.Errorf("String: %q, want %q", got, w)
			}
		}
	}
	var v Violation
	v.msg = lazyMsg{format: "reserved bits set (0x%x)", ints: [5]int{math.MinInt}, n: 1, uns: 1}
	if got, want := v.Message(), fmt.Sprintf("reserved bits set (0x%x)", uint64(1)<<63); got != want {
		t.Errorf("bit 63 set: %q, want %q", got, want)
	}
}

// checkFormats returns the message formats of check.go's calls of
// violations.add.
func checkFormats(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "check.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var formats []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "add" || len(call.Args) < 5 {
			return true
		}
		lit, ok := call.Args[4].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			t.Errorf("add call with format %T, want a string literal", call.Args[4])
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(call.Args)-5, len(formatVerbs(s)); got != want || got > len(lazyMsg{}.ints) {
			t.Errorf("%q: %d operands, want %d (at most %d)", s, got, want, len(lazyMsg{}.ints))
		}
		formats = append(formats, s)
		return true
	})
	return formats
}

// formatVerbs returns the verbs of format f, %% aside.
func formatVerbs(f string) []byte {
	var verbs []byte
	for i := 0; i < len(f)-1; i++ {
		if f[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(f) && (f[j] >= '0' && f[j] <= '9') {
			j++
		}
		if f[j] != '%' {
			verbs = append(verbs, f[j])
		}
		i = j
	}
	return verbs
}

// TestViolationJSONHasMessage: a Violation Check wrote encodes to JSON
// with its message as Msg, as one holding the text in Msg does.
func TestViolationJSONHasMessage(t *testing.T) {
	q := samplePackets()[0]
	f, err := Default.Append(nil, &q)
	if err != nil {
		t.Fatal(err)
	}
	f[len(f)-1] ^= 0xFF // the ICRC
	var p Packet
	if err := Default.Decode(f, &p); err != nil {
		t.Fatal(err)
	}
	vs := Default.Check(f, &p, nil)
	if len(vs) != 1 || vs[0].Msg != "" {
		t.Fatalf("violations %v, want one ICRC violation with its message unformatted", vs)
	}
	got, err := json.Marshal(vs[0])
	if err != nil {
		t.Fatal(err)
	}
	eager := vs[0]
	eager.Msg = vs[0].Message()
	eager.msg = lazyMsg{}
	want, err := json.Marshal(eager)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) || !strings.Contains(string(got), `"Msg":"ICRC 0x`) {
		t.Errorf("%s, want %s", got, want)
	}
}

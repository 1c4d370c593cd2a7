package wire

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// specTables reads the field tables of spec/11-wire-headers.md: for each
// header, the field name owning every bit ("reserved" for reserved bits).
func specTables(t *testing.T) map[string][]string {
	f, err := os.Open("../spec/11-wire-headers.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	var section string
	tables := 0
	inTable := false
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		l := sc.Text()
		if strings.HasPrefix(l, "#") {
			section = strings.Fields(strings.TrimLeft(l, "# "))[0]
			tables, inTable = 0, false
			continue
		}
		if !strings.HasPrefix(l, "|") {
			inTable = false
			continue
		}
		cols := strings.Split(strings.Trim(l, "|"), "|")
		for i := range cols {
			cols[i] = strings.TrimSpace(cols[i])
		}
		if cols[0] == "Field" {
			tables++
			inTable = true
			continue
		}
		if !inTable || strings.HasPrefix(cols[0], "---") || len(cols) < 4 {
			continue
		}
		name := section
		if section == "SETH" && tables == 2 {
			name = "CC_STATE"
		}
		byteOff, e1 := strconv.Atoi(cols[1])
		bit, e2 := strconv.Atoi(cols[2])
		width, e3 := strconv.Atoi(cols[3])
		if e1 != nil || e2 != nil || e3 != nil || byteOff != bit/8 {
			t.Fatalf("spec/11-wire-headers.md:%d: bad row %q (byte %d must be bit/8)", line, l, byteOff)
		}
		bits := out[name]
		for len(bits) < bit+width {
			bits = append(bits, "")
		}
		for i := bit; i < bit+width; i++ {
			if bits[i] != "" {
				t.Fatalf("spec/11-wire-headers.md:%d: %s bit %d in both %s and %s", line, name, i, bits[i], cols[0])
			}
			bits[i] = cols[0]
		}
		out[name] = bits
	}
	return out
}

// TestSpecTablesMatchCodec: every bit of every header is owned by the same
// field in spec/11-wire-headers.md as in the codec's field descriptions
// (which the codec is tested against bit for bit), so the normative tables,
// the Go codec and the generated Lua dissector cannot drift apart
// (WIRE-BTH-1, WIRE-METH-1, WIRE-TSETH-1, WIRE-RETH-1, WIRE-AETH-1,
// WIRE-SETH-1, WIRE-SETH-2, WIRE-NETH-1, WIRE-PETH-1, WIRE-ERTH-1, WIRE-EETH-1).
func TestSpecTablesMatchCodec(t *testing.T) {
	spec := specTables(t)
	for _, h := range Default.Headers() {
		want, ok := spec[h.Name]
		if h.Name == "ImmDt" {
			continue // described in prose: one 32-bit field imm_data
		}
		if !ok {
			t.Errorf("%s: no field table in spec/11-wire-headers.md", h.Name)
			continue
		}
		if len(want) != 8*h.Len {
			t.Errorf("%s: spec table covers %d bits, codec header has %d", h.Name, len(want), 8*h.Len)
			continue
		}
		for _, f := range h.Fields {
			for i := f.Bit; i < f.Bit+f.Width; i++ {
				if want[i] != f.Name {
					t.Errorf("%s bit %d: spec says %q, codec says %q", h.Name, i, want[i], f.Name)
					break
				}
			}
		}
	}
}

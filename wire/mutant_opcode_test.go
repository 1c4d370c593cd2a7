package wire

// Tests written against mutants of opcode.go that the package's other
// tests let live (scripts/mutate.sh; modelcheck/README "Mutation testing").

import "testing"

// TestMutantFirstLast: over every opcode value, IsFirst holds for exactly
// the opcodes that start a message (WRITE_FIRST, WRITE_ONLY and
// WRITE_ONLY_IMM) and IsLast for exactly those that end one (WRITE_LAST,
// WRITE_LAST_IMM, WRITE_ONLY and WRITE_ONLY_IMM), as IBTA's opcode names say.
func TestMutantFirstLast(t *testing.T) {
	first := map[Opcode]bool{OpWriteFirst: true, OpWriteOnly: true, OpWriteOnlyImm: true}
	last := map[Opcode]bool{OpWriteLast: true, OpWriteLastImm: true, OpWriteOnly: true, OpWriteOnlyImm: true}
	for v := 0; v < 256; v++ {
		o := Opcode(v)
		if o.IsFirst() != first[o] {
			t.Errorf("%s: IsFirst %v, want %v", o, o.IsFirst(), first[o])
		}
		if o.IsLast() != last[o] {
			t.Errorf("%s: IsLast %v, want %v", o, o.IsLast(), last[o])
		}
	}
}

package api

import (
	"errors"
	"strings"
	"testing"
)

// A header written for these tests: every construct the upstream headers
// use (include guard, C++ guard, continued macros, conditional
// declarations, implicit and shifted enum values, nested and anonymous
// aggregates, array typedefs, prototypes).
const testVerH = `#ifndef _T_VER_H_
#define _T_VER_H_
/* block
   comment */
#define T_MAJ_OFF 24 // line comment
#define T_VER(_a, _b) \
	(((_a) << T_MAJ_OFF) | \
	 (_b))
#define T_CUR T_VER(1, 2)
#ifndef T_USED
    #define T_USED T_CUR
#elif T_USED == 0
    #error "no"
#endif
#endif
`

const testH = `#ifndef _T_H_
#define _T_H_
#include <stdint.h>
#include <t_ver.h>
#ifdef __cplusplus
extern "C" {
#endif
#define T_SIZE 128
#define T_LIT ((struct t_ev){ .v = { 0 } })
struct t_ctx;
enum t_mask {
	T_A = 1 << 0,
	T_B,
	T_C = T_SIZE | 1,
	T_D = 1 << 31
};
typedef uint8_t t_ev_t[T_SIZE];
struct t_attr {
	struct {
		uint8_t lo;
		uint16_t hi;
	} pair;
	union {
		struct t_ctx *ctx;
		int port;
	};
	uint8_t cfg[T_SIZE];
	const char **names;
#if T_USED >= T_VER(1, 1)
	enum t_mask state;
#endif
};
#if T_USED >= T_VER(1, 1)
int t_query_ex(struct t_ctx *ctx, struct t_attr *attr, int *ok);
#endif
struct t_ctx *t_open(void);
void t_close(struct t_ctx *ctx, unsigned int n);
#ifdef __cplusplus
}
#endif
#endif
`

func TestExtract(t *testing.T) {
	facts, err := Extract([]string{"t_ver.h", "t.h"}, map[string][]byte{"t_ver.h": []byte(testVerH), "t.h": []byte(testH)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range facts {
		got = append(got, f.String())
	}
	want := []string{
		"define\tt_ver.h\tT_MAJ_OFF\t24",
		"macro\tt_ver.h\tT_VER\t(_a, _b)",
		"define\tt_ver.h\tT_CUR\t16777218",
		"define\tt_ver.h\tT_USED\t16777218\t!defined(T_USED)",
		"include\tt.h\tstdint.h\t",
		"include\tt.h\tt_ver.h\t",
		"define\tt.h\tT_SIZE\t128",
		"define\tt.h\tT_LIT\t((struct t_ev) { .v = { 0 } })",
		"opaque\tt.h\tt_ctx\tstruct",
		"enum\tt.h\tt_mask\tenum",
		"const\tt.h\tt_mask.T_A\t1",
		"const\tt.h\tt_mask.T_B\t2",
		"const\tt.h\tt_mask.T_C\t129",
		"const\tt.h\tt_mask.T_D\t2147483648",
		"typedef\tt.h\tt_ev_t\tuint8_t[T_SIZE]",
		"struct\tt.h\tt_attr\tstruct",
		"field\tt.h\tt_attr.pair\t0 struct",
		"field\tt.h\tt_attr.pair.lo\t1 uint8_t",
		"field\tt.h\tt_attr.pair.hi\t2 uint16_t",
		"field\tt.h\tt_attr.anonymous3\t3 union",
		"field\tt.h\tt_attr.ctx\t4 struct t_ctx *",
		"field\tt.h\tt_attr.port\t5 int",
		"field\tt.h\tt_attr.cfg\t6 uint8_t[T_SIZE]",
		"field\tt.h\tt_attr.names\t7 const char **",
		"field\tt.h\tt_attr.state\t8 enum t_mask\tT_USED >= T_VER(1, 1)",
		"func\tt.h\tt_query_ex\tint (struct t_ctx *ctx, struct t_attr *attr, int *ok)\tT_USED >= T_VER(1, 1)",
		"func\tt.h\tt_open\tstruct t_ctx * ()",
		"func\tt.h\tt_close\tvoid (struct t_ctx *ctx, unsigned int n)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestExtractErrors: malformed headers are typed errors naming file and
// line, never a panic or a partial table.
func TestExtractErrors(t *testing.T) {
	for _, c := range []struct{ src, msg string }{
		{"#if X\nint f(void);\n", "unterminated #if"},
		{"#endif\n", "#endif without #if"},
		{"#bogus\n", "unknown directive"},
		{"int f(void)\n", "without ';'"},
		{"enum e { A B };\n", "without '='"},
		{"enum e { A = 1 << 99 };\n", "shift"},
		{"enum e { A = 1 / 0 };\n", "division"},
		{"#define M(a) M(a)\nenum e { A = M(1) };\n", "deeper"},
		{"<<<<<<< HEAD\nint f(void);\n", "in a type"},
		{"int x = 3;\n", "unrecognised declaration"},
		{"struct s { struct { int a; } b, c; };\n", "more than one declarator"},
	} {
		_, err := Extract([]string{"x.h"}, map[string][]byte{"x.h": []byte(c.src)})
		var ee *ExtractError
		if !errors.As(err, &ee) || ee.File != "x.h" || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: %v, want an ExtractError with %q", c.src, err, c.msg)
		}
	}
	if _, err := Extract([]string{"missing.h"}, nil); err == nil {
		t.Error("a missing header was accepted")
	}
}

// TestEvalTruncatedInput: every prefix of an expression evaluates or
// fails cleanly.
func TestEvalTruncatedInput(t *testing.T) {
	x := &extractor{macros: map[string]macro{}, consts: map[string]int64{}}
	x.macros["V"] = macro{fn: true, params: []string{"a", "b"}, body: tokenize("((a) << 24 | (b))")}
	expr := tokenize("~(V(1, 2) | (3 * -4 % 5) ^ 6 & 7 >> 1) + 0x10u")
	for i := range expr {
		_, _ = x.eval(expr[:i])
	}
	if v, err := x.eval(expr); err != nil || v != ^int64(16777218|((3*-4%5)^(6&(7>>1))))+16 {
		t.Errorf("eval = %d, %v", v, err)
	}
}

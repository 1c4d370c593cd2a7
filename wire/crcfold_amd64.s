//go:build !purego

#include "textflag.h"

// FOLD moves each 128-bit lane of a on, with the constants k (its low
// quadword times k's low one, its high times k's high, the two products
// XORed), using t; a is then to be XORed with the data it lands on.
#define FOLD(k, a, t) \
	VPCLMULQDQ $0x00, k, a, t; \
	VPCLMULQDQ $0x11, k, a, a; \
	VPXOR      t, a, a

// func foldVec(s uint32, p []byte, out *[16]byte, k *[10]uint64, zmm bool)
//
// Folds p (len(p) >= 256, a multiple of 16) with the CRC register s
// XORed into its first four bytes, into out's 16 bytes, whose CRC from a
// register of zero is p's from s. k holds the constants (foldK).
//
// With YMM registers (zmm false): four accumulators of 32 bytes, each
// 128-bit lane moved 128 bytes on per step, then folded into one YMM.
// With ZMM registers (zmm true): four accumulators of 64 bytes, each lane
// moved 256 bytes on per step, then folded into one ZMM, which takes the
// next 64-byte blocks one at a time, then folded into one YMM. Either way
// the YMM's low lane is folded onto its high one, which takes the last
// 16-byte blocks one at a time.
TEXT ·foldVec(SB), NOSPLIT, $0-49
	MOVL s+0(FP), AX
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	MOVQ out+32(FP), DI
	MOVQ k+40(FP), R8
	VMOVD AX, X4
	CMPB zmm+48(FP), $0
	JNE  zmm

	MOVQ CX, R9
	ANDQ $127, R9 // the last blocks, after the 128-byte steps
	ANDQ $~127, CX
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVDQU 96(SI), Y3
	VPXOR   Y4, Y0, Y0
	VBROADCASTI128 16(R8), Y8
	ADDQ    $128, SI
	SUBQ    $128, CX

yloop:
	VPCLMULQDQ $0x00, Y8, Y0, Y4
	VPCLMULQDQ $0x11, Y8, Y0, Y0
	VPCLMULQDQ $0x00, Y8, Y1, Y5
	VPCLMULQDQ $0x11, Y8, Y1, Y1
	VPCLMULQDQ $0x00, Y8, Y2, Y6
	VPCLMULQDQ $0x11, Y8, Y2, Y2
	VPCLMULQDQ $0x00, Y8, Y3, Y7
	VPCLMULQDQ $0x11, Y8, Y3, Y3
	VPXOR   0(SI), Y4, Y4
	VPXOR   32(SI), Y5, Y5
	VPXOR   64(SI), Y6, Y6
	VPXOR   96(SI), Y7, Y7
	VPXOR   Y4, Y0, Y0
	VPXOR   Y5, Y1, Y1
	VPXOR   Y6, Y2, Y2
	VPXOR   Y7, Y3, Y3
	ADDQ    $128, SI
	SUBQ    $128, CX
	JNZ     yloop

	// Y0 onto Y1, that onto Y2, that onto Y3 (256 bits on each time).
	VBROADCASTI128 48(R8), Y8
	FOLD(Y8, Y0, Y4)
	VPXOR   Y0, Y1, Y1
	FOLD(Y8, Y1, Y4)
	VPXOR   Y1, Y2, Y2
	FOLD(Y8, Y2, Y4)
	VPXOR   Y2, Y3, Y3
	MOVQ    R9, CX
	JMP     lanes

zmm:
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VPXORQ    Z4, Z0, Z0
	VBROADCASTI32X4 0(R8), Z8
	ADDQ      $256, SI
	SUBQ      $256, CX

zloop:
	CMPQ CX, $256
	JB   zreduce
	VPCLMULQDQ $0x00, Z8, Z0, Z4
	VPCLMULQDQ $0x11, Z8, Z0, Z0
	VPCLMULQDQ $0x00, Z8, Z1, Z5
	VPCLMULQDQ $0x11, Z8, Z1, Z1
	VPCLMULQDQ $0x00, Z8, Z2, Z6
	VPCLMULQDQ $0x11, Z8, Z2, Z2
	VPCLMULQDQ $0x00, Z8, Z3, Z7
	VPCLMULQDQ $0x11, Z8, Z3, Z3
	VPTERNLOGD $0x96, 0(SI), Z4, Z0
	VPTERNLOGD $0x96, 64(SI), Z5, Z1
	VPTERNLOGD $0x96, 128(SI), Z6, Z2
	VPTERNLOGD $0x96, 192(SI), Z7, Z3
	ADDQ $256, SI
	SUBQ $256, CX
	JMP  zloop

zreduce:
	// Z0 onto Z1, that onto Z2, that onto Z3 (512 bits on each time).
	VBROADCASTI32X4 32(R8), Z8
	VPCLMULQDQ $0x00, Z8, Z0, Z4
	VPCLMULQDQ $0x11, Z8, Z0, Z0
	VPTERNLOGD $0x96, Z4, Z0, Z1
	VPCLMULQDQ $0x00, Z8, Z1, Z4
	VPCLMULQDQ $0x11, Z8, Z1, Z1
	VPTERNLOGD $0x96, Z4, Z1, Z2
	VPCLMULQDQ $0x00, Z8, Z2, Z4
	VPCLMULQDQ $0x11, Z8, Z2, Z2
	VPTERNLOGD $0x96, Z4, Z2, Z3

z64:
	CMPQ CX, $64
	JB   zhalf
	VPCLMULQDQ $0x00, Z8, Z3, Z4
	VPCLMULQDQ $0x11, Z8, Z3, Z3
	VPTERNLOGD $0x96, 0(SI), Z4, Z3
	ADDQ $64, SI
	SUBQ $64, CX
	JMP  z64

zhalf:
	// Z3's low half onto its high half (256 bits on).
	VBROADCASTI128 48(R8), Y8
	VEXTRACTI64X4 $1, Z3, Y1
	FOLD(Y8, Y3, Y4)
	VPXOR   Y1, Y3, Y3

lanes:
	// Y3's low lane onto its high one (128 bits on), then the last CX
	// bytes a 16-byte block at a time.
	VMOVDQU 64(R8), X8
	VEXTRACTI128 $1, Y3, X1
	FOLD(X8, X3, X4)
	VPXOR   X1, X3, X3

tail:
	TESTQ   CX, CX
	JZ      done
	FOLD(X8, X3, X4)
	VPXOR   0(SI), X3, X3
	ADDQ    $16, SI
	SUBQ    $16, CX
	JMP     tail

done:
	VMOVDQU X3, 0(DI)
	VZEROUPPER
	RET

// func cpuid(leaf, sub uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET

// func xgetbv() (lo uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-4
	MOVL $0, CX
	XGETBV
	MOVL AX, lo+0(FP)
	RET

package wire

// PSNMask keeps a PSN to its 24 bits (WIRE-BTH-4).
const PSNMask = 1<<24 - 1

// PSNAdd returns psn+n modulo 2^24.
func PSNAdd(psn uint32, n int) uint32 { return uint32(int64(psn)+int64(n)) & PSNMask }

// PSNDiff returns the signed distance a-b in the 24-bit circular space,
// in [-2^23, 2^23).
func PSNDiff(a, b uint32) int32 { return int32((a-b)&PSNMask<<8) >> 8 }

// PSNLess reports whether a comes before b in serial-number order.
func PSNLess(a, b uint32) bool { return PSNDiff(a, b) < 0 }

//go:build !amd64 || purego

package wire

const canFold, useFold = false, false

func foldYMM(s uint32, p []byte, out *[16]byte, k *[6]uint64) { panic("wire: foldYMM without amd64") }

//go:build !amd64 || purego

package wire

const canFold, canFoldZMM = false, false

func foldYMM(s uint32, p []byte, out *[16]byte, k *[6]uint64) { panic("wire: foldYMM without amd64") }

func foldZMM(s uint32, p []byte, out *[16]byte, k *[8]uint64) { panic("wire: foldZMM without amd64") }

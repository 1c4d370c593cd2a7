//go:build !amd64 || purego

package wire

const canFold, canFoldZMM = false, false

func foldVec(s uint32, p []byte, out *[16]byte, k *[10]uint64, zmm bool) {
	panic("wire: foldVec without amd64")
}

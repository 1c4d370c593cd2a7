package pcap

// DefaultKeysErr exposes, to tests, whether the field keys the printers
// interpret could be found in wire.Default's header descriptions.
var DefaultKeysErr = defaultKeysErr

// SetInitialBuf sets the size of a new Reader's first buffer and returns
// a function that restores it.
func SetInitialBuf(n int) (restore func()) {
	old := initialBuf
	initialBuf = n
	return func() { initialBuf = old }
}

package pcap

// DefaultKeysErr exposes, to tests, whether the field keys the printers
// interpret could be found in wire.Default's header descriptions.
var DefaultKeysErr = defaultKeysErr

package conformance

import (
	"net/netip"
	"regexp"
)

func regexpMust(s string) *regexp.Regexp { return regexp.MustCompile(s) }

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

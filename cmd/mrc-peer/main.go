// Command mrc-peer is the reference MRC implementation under test: the
// statemachine reference QPs and endpoint agent behind the conformance
// control protocol (conformance/control-protocol.md), on a real data
// path. mrc-conform run drives it like any vendor's IUT; --fault seeds
// known bugs so that the suite can be seen to catch them.
//
// Usage:
//
//	mrc-peer --control ADDR [--transport udp] [--listen HOST:PORT] [--planes N] [--ip ADDR] [--explicit-range] [--fault NAME]...
//	mrc-peer --control ADDR --transport afpacket --iface IF[,IF...] [--ip ADDR] [--fault NAME]...
//	mrc-peer --version
//
// The control address is unix:PATH or tcp:HOST:PORT. With the UDP
// transport, frames travel in UDP datagrams behind the netio tunnel shim
// and the peer answers the tunnel address the tester's control hello
// announces, reading datagrams from nowhere else (until a hello, the
// address the last valid datagram came from); with AF_PACKET (Linux,
// root) each interface is one plane and the peer sends only on those
// interfaces. --ip takes an IPv4 or an IPv6 address: it sets
// the IP version of every MRC frame (mrc-conform run follows the address
// the peer announces); the tunnel itself may run over either version
// (--listen [::1]:47910).
//
// Exit status: 0 after SIGINT or SIGTERM, 1 a runtime failure, 2 a usage
// error, 127 a transport this platform lacks.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/internal/cli"
	"github.com/openmrc/mrc/netio"
	"github.com/openmrc/mrc/peer"
	"github.com/openmrc/mrc/spec"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := cli.Command{Name: "mrc-peer", Stdout: stdout, Stderr: stderr}
	fs := flag.NewFlagSet("mrc-peer", flag.ContinueOnError)
	version := fs.Bool("version", false, "print the version and exit")
	ctlAddr := fs.String("control", "", "control address: unix:PATH or tcp:HOST:PORT (required)")
	transport := fs.String("transport", "udp", "data path: udp (tunnel) or afpacket")
	listen := fs.String("listen", "127.0.0.1:47910", "udp: the tunnel's local address")
	remote := fs.String("remote", "", "udp: the tester's tunnel address (default: the one its control hello announces; before that, the source of the last valid datagram)")
	planes := fs.Int("planes", 2, "udp: number of planes")
	ifaces := fs.String("iface", "", "afpacket: interfaces, one per plane, comma-separated")
	ipStr := fs.String("ip", "10.0.0.2", "the node's MRC address")
	seed := fs.Uint64("seed", 1, "seed of the QPs' random choices")
	explicitRange := fs.Bool("explicit-range", false, "the device advertises and enforces MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE (CTL-OP-6)")
	var faults peer.FaultSet
	fs.Var(&faults, "fault", "seed a known bug (repeatable): "+strings.Join(peer.FaultNames(), ", "))
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: mrc-peer --control ADDR [--transport udp|afpacket] [flags]\n\nflags:")
		fs.PrintDefaults()
		fmt.Fprintln(fs.Output(), "\nfaults:")
		for _, f := range peer.Faults {
			fmt.Fprintf(fs.Output(), "  %-20s %s\n", f.Name(), f.Doc())
		}
	}
	pos, done, code := cmd.Parse(fs, args, false)
	if done {
		return code
	}
	if *version {
		fmt.Fprintln(stdout, cli.Version("mrc-peer"))
		return 0
	}
	fail := cmd.Errorf
	if len(pos) > 0 {
		return cmd.Usagef("unexpected arguments %q", pos)
	}
	if *ctlAddr == "" {
		return cmd.Usagef("--control is required")
	}
	ip, err := netip.ParseAddr(*ipStr)
	if err != nil {
		return cmd.Usagef("--ip %q: %v", *ipStr, err)
	}
	prof := spec.DefaultProfile()
	conn, code := openConn(cmd, *transport, *listen, *remote, *ifaces, *planes, prof.AcceptUDPDstPorts)
	if conn == nil {
		return code
	}
	defer conn.Close()
	a, err := peer.New(peer.Config{MACs: conn.MACs(), IP: ip, Seed: *seed, Faults: faults, Profile: &prof, ExplicitRange: *explicitRange,
		Implementation: control.Implementation{Vendor: "openmrc", Model: "mrc-peer (reference)", Version: "statemachine",
			Driver: *transport + " " + strings.Join(faults.Names(), ",")}})
	if err != nil {
		return fail(2, "%v", err)
	}
	return serve(ctx, cmd, session{a, conn, *ctlAddr, *transport, ip, faults.Names()}, stderr)
}

// openConn opens the data path the flags name, or returns the exit status
// that says why it could not.
func openConn(cmd cli.Command, transport, listen, remote, ifaces string, planes int, ports []uint16) (netio.Conn, int) {
	switch transport {
	case "udp":
		if planes < 1 || planes > 8 {
			return nil, cmd.Usagef("--planes %d: want 1 to 8", planes)
		}
		macs := make([][6]byte, planes)
		for i := range macs {
			macs[i] = [6]byte{0x02, 0x4d, 0x52, 0x50, 0x00, byte(0x10 + i)}
		}
		t, err := netio.ListenTunnel(listen, remote, macs)
		if err != nil {
			return nil, cmd.Errorf(1, "%v", err)
		}
		return t, 0
	case "afpacket":
		if !netio.AFPacketSupported {
			return nil, cmd.Errorf(127, "the afpacket transport needs Linux")
		}
		if ifaces == "" {
			return nil, cmd.Usagef("--transport afpacket needs --iface")
		}
		a, err := netio.OpenAFPacket(strings.Split(ifaces, ","), ports, false)
		if err != nil {
			return nil, cmd.Errorf(1, "%v", err)
		}
		return a, 0
	default:
		return nil, cmd.Usagef("unknown transport %q (want udp or afpacket)", transport)
	}
}

// session is what serve runs: the agent on its data path, and what it prints
// about them.
type session struct {
	agent     *peer.Agent
	conn      netio.Conn
	ctlAddr   string
	transport string
	ip        netip.Addr
	faults    []string
}

// serve answers the control connection and runs the agent until ctx ends
// or either fails.
func serve(ctx context.Context, cmd cli.Command, p session, stderr io.Writer) int {
	network, addr := control.SplitAddr(p.ctlAddr)
	if network == "unix" {
		os.Remove(addr)
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		return cmd.Errorf(1, "control: %v", err)
	}
	if network == "unix" {
		defer os.Remove(addr)
	}
	r := peer.NewRunner(p.agent, p.conn)
	r.Logf = func(f string, args ...any) { fmt.Fprintf(stderr, "mrc-peer: "+f+"\n", args...) }
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	serr := make(chan error, 1)
	go func() { serr <- control.Serve(ctx, l, r.Handler()) }()
	fmt.Fprintf(stderr, "mrc-peer: control on %s, data on %s (%d planes), address %v, faults [%s]\n",
		p.ctlAddr, p.transport, p.conn.Planes(), p.ip, strings.Join(p.faults, ","))
	err = r.Run(ctx)
	cancel()
	if serr := <-serr; err == nil {
		err = serr
	}
	if err != nil {
		return cmd.Errorf(1, "%v", err)
	}
	return 0
}

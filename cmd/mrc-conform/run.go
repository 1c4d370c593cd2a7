package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/conformance/active"
	"github.com/openmrc/mrc/internal/cli"
	"github.com/openmrc/mrc/netio"
	"github.com/openmrc/mrc/peer"
	"github.com/openmrc/mrc/spec"
)

func init() {
	register("run", "run the active conformance suite against an implementation (default: the built-in reference, in process)", runActive)
}

const runUsage = `usage: mrc-conform run [flags]

Runs the active conformance suite: the tester plays the peer of an
implementation under test (IUT), as responder and as requester, drives it
through the control protocol (conformance/control-protocol.md), injects
crafted and impaired packets and judges the answers. Every case cites the
requirement IDs it checks and ends PASS, FAIL, NON-STRICT, INCONCLUSIVE,
NOT-APPLICABLE, NOT-SUPPORTED or ERROR.

Transports:
  inproc    the built-in reference implementation in this process, on a
            simulated fabric with synthetic time (default; deterministic,
            no privileges; --fault seeds its known bugs)
  udp       an IUT process (mrc-peer, a simulator) reached through the UDP
            tunnel at --peer HOST:PORT, controlled at --control
  afpacket  an IUT on the wire: raw frames on --iface IF[,IF...] (one per
            plane; Linux, root), sent only to the --peer addresses

The IUT's address (IPv4 or IPv6, from its hello) decides the IP version of
the run; --tester-ip gives the tester one address per version. Cases that
need IPv6 (SRv6 decapsulation) are NOT-APPLICABLE over IPv4.

Exit status (the README's table "Results and exit status"): 0 PASS, at
least one MUST case PASSed and none FAILed; 1 FAIL, a MUST case FAILed
outside an unexpired deviation; 2 a usage error, an unreachable IUT, a
dead data path, a case in ERROR, or no MUST case could be judged
(INCONCLUSIVE); 127 the transport is not available on this platform, or
the IUT supports none of the MUST cases asked (every one NOT-SUPPORTED
or NOT-APPLICABLE; the QUIC interop runner's convention).

flags:
`

type runFlags struct {
	transport, iface, peers, ctl, tunnel, testerIP string
	pics, cases, format, out, capture, profile     string
	devs                                           deviationFlags
	seed                                           uint64
	planes                                         int
	tolerance, ctlTimeout                          time.Duration
	faults                                         peer.FaultSet
	log, all, ipv6, progress                       bool
}

func runActive(args []string, stdout, stderr io.Writer) int {
	cmd := cli.Command{Name: "mrc-conform run", Stdout: stdout, Stderr: stderr}
	var fl runFlags
	fs := runFlagSet(&fl)
	pos, done, code := cmd.Parse(fs, args, false)
	if done {
		return code
	}
	if len(pos) > 0 {
		return cmd.Usagef("unexpected arguments %q", pos)
	}
	f := conformance.Format(fl.format)
	if !validFormat(f) {
		return cmd.Usagef("unknown format %q (want text, json, junit or html)", fl.format)
	}
	opts, code := activeOptions(cmd, fs, &fl)
	if code != 0 {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	tgt, code, err := openTarget(ctx, &fl, runProfile(opts))
	if err != nil {
		return cmd.Errorf(code, "%v", err)
	}
	defer tgt.Close()
	var capBuf bytes.Buffer
	if fl.capture != "" {
		opts.Capture, opts.CaptureName = &capBuf, fl.capture
	}
	rep, err := active.Run(ctx, tgt, opts)
	if err != nil {
		return cmd.Errorf(2, "%v", err)
	}
	if fl.capture != "" {
		if err := os.WriteFile(fl.capture, capBuf.Bytes(), 0o644); err != nil {
			return cmd.Errorf(2, "%v", err)
		}
	}
	return writeActiveReport(cmd, rep, &fl, f, tgt.Name())
}

// runFlagSet defines run's flags into fl.
func runFlagSet(fl *runFlags) *flag.FlagSet {
	fs := newFlagSet("run", runUsage)
	fs.StringVar(&fl.transport, "transport", "inproc", "inproc, udp or afpacket")
	fs.StringVar(&fl.iface, "iface", "", "afpacket: the tester's interfaces, one per plane, comma-separated")
	fs.StringVar(&fl.peers, "peer", "", "udp: the IUT's tunnel address HOST:PORT; afpacket: the IUT's IP addresses (the only destinations allowed)")
	fs.StringVar(&fl.ctl, "control", "", "the IUT's control address: unix:PATH or tcp:HOST:PORT (udp, afpacket)")
	fs.StringVar(&fl.tunnel, "local", "", "udp: the tester's tunnel address (default: port 0 on the loopback, or the unspecified address, of the --peer address's IP version)")
	fs.StringVar(&fl.testerIP, "tester-ip", "10.0.0.1,fd00::1", "udp, afpacket: the tester's own MRC addresses, at most one per IP version (comma-separated); the run uses the one of the IUT's version")
	fs.StringVar(&fl.profile, "profile", "", profileFlagUsage+" (default: the PICS's profile; the inproc peer speaks it too)")
	fs.StringVar(&fl.pics, "pics", "", "PICS file (JSON); default: the features the IUT declares in hello")
	fl.devs.define(fs)
	fs.StringVar(&fl.cases, "cases", "", "case IDs to run: comma-separated glob patterns (e.g. 'MRC-LR-*,MRC-EV-BAD-101')")
	fs.StringVar(&fl.format, "format", "text", "report format: text, json, junit or html")
	fs.StringVar(&fl.out, "o", "", "write the report to this file; standard output gets only the summary")
	fs.StringVar(&fl.capture, "capture", "", "write a pcapng capture of the run (one interface per plane)")
	fs.Uint64Var(&fl.seed, "seed", 1, "seed of every random choice (a run is reproducible from it)")
	fs.IntVar(&fl.planes, "planes", 2, "inproc, udp: number of planes")
	fs.BoolVar(&fl.ipv6, "ipv6", false, "inproc: give the reference and the tester IPv6 addresses (fd00::2, fd00::1) instead of IPv4 ones")
	fs.DurationVar(&fl.ctlTimeout, "control-timeout", 10*time.Second, "udp, afpacket: how long the IUT may take to answer one control request; a request unanswered by then breaks the control channel (ERROR)")
	fs.DurationVar(&fl.tolerance, "tolerance", 0, "udp, afpacket: timing tolerance for scheduling, the fabric and the IUT's reaction (default: the PICS's capture.timer_tolerance_ns, else 20ms)")
	fs.Var(&fl.faults, "fault", "inproc: seed a known bug into the reference (repeatable): "+strings.Join(peer.FaultNames(), ", "))
	fs.BoolVar(&fl.log, "log", false, "log every case's steps to standard error")
	fs.BoolVar(&fl.all, "v", false, "text format: list every case's reason and more findings (as judge -v)")
	fs.BoolVar(&fl.progress, "progress", false, "print one line per case as it ends on standard error (default: when standard error is a terminal)")
	return fs
}

// activeOptions turns the flags into the suite's options; a non-zero code
// is the exit status of a flag or file it refused (already reported).
func activeOptions(cmd cli.Command, fs *flag.FlagSet, fl *runFlags) (active.Options, int) {
	stderr := cmd.Stderr
	var opts active.Options
	opts.Seed, opts.Cases = fl.seed, fl.cases
	if _, err := active.Select(fl.cases); err != nil {
		return opts, cmd.Usagef("%v", err)
	}
	if fl.pics != "" {
		p, err := conformance.LoadPICS(fl.pics)
		if err != nil {
			return opts, cmd.Errorf(2, "%v", err)
		}
		opts.PICS = p
	}
	if fl.profile != "" {
		prof, err := loadProfileArg(fl.profile)
		if err != nil {
			return opts, cmd.Errorf(2, "%v", err)
		}
		opts.Profile = &prof
	}
	var code int
	if opts.Deviations, opts.Today, code = fl.devs.load(cmd); code != 0 {
		return opts, code
	}
	if fl.tolerance < 0 || (fl.tolerance > 0 && fl.transport == "inproc") {
		return opts, cmd.Usagef("--tolerance applies to the udp and afpacket transports, and must be positive")
	}
	if fl.tolerance > 0 {
		tim := active.RealTiming(active.Time(fl.tolerance))
		opts.Timing = &tim
	}
	if fl.log {
		opts.Logf = func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }
	}
	if progressWanted(fs, fl.progress, stderr) {
		opts.Progress = progressPrinter(stderr)
	}
	return opts, 0
}

// writeActiveReport writes the report as the flags ask and returns the
// run's exit status.
func writeActiveReport(cmd cli.Command, rep *conformance.Report, fl *runFlags, f conformance.Format, target string) int {
	stdout, stderr := cmd.Stdout, cmd.Stderr
	if fl.out != "" {
		var buf bytes.Buffer
		if err := rep.Write(&buf, f); err != nil {
			return cmd.Errorf(2, "%v", err)
		}
		if err := os.WriteFile(fl.out, buf.Bytes(), 0o644); err != nil {
			return cmd.Errorf(2, "%v", err)
		}
	}
	if fl.out == "" && f != conformance.FormatText {
		if err := rep.Write(stdout, f); err != nil {
			return cmd.Errorf(2, "%v", err)
		}
	} else {
		fmt.Fprintf(stdout, "mrc-conform run: %d active cases against %s\n", len(rep.Results), target)
		if err := rep.WriteTextOpts(stdout, conformance.TextOptions{All: fl.all, Findings: map[bool]int{true: 20, false: 3}[fl.all], SummaryOnly: fl.out != ""}); err != nil {
			return cmd.Errorf(2, "%v", err)
		}
		if fl.out != "" {
			fmt.Fprintf(stdout, "report in %s\n", fl.out)
		}
	}
	if rep.Summary.Why != "" {
		fmt.Fprintf(stderr, "mrc-conform run: %s: %s (exit status %d)\n", rep.Summary.Result, rep.Summary.Why, rep.ExitCode())
	}
	return rep.ExitCode()
}

// openTarget opens the IUT the flags name; on failure it returns the exit
// status to use.
// runProfile is the wire profile of a run: --profile, else the PICS's, else
// the default (spec.OrDefault). The tester, the link's port filter and the
// in-process peer all speak it.
func runProfile(opts active.Options) *spec.Profile {
	if opts.Profile == nil && opts.PICS != nil {
		return spec.OrDefault(opts.PICS.Profile)
	}
	return spec.OrDefault(opts.Profile)
}

func openTarget(ctx context.Context, fl *runFlags, prof *spec.Profile) (active.Target, int, error) {
	switch fl.transport {
	case "inproc":
		return openInproc(fl, prof)
	case "udp", "afpacket":
	default:
		return nil, 2, fmt.Errorf("unknown transport %q (want inproc, udp or afpacket)", fl.transport)
	}
	if !fl.faults.Empty() {
		return nil, 2, errors.New("--fault applies to the inproc transport only (give mrc-peer its own --fault)")
	}
	if fl.ipv6 {
		return nil, 2, errors.New("--ipv6 applies to the inproc transport only (the IUT's hello gives its address; --tester-ip the tester's)")
	}
	if fl.ctl == "" || fl.peers == "" {
		return nil, 2, fmt.Errorf("the %s transport needs --control and --peer", fl.transport)
	}
	var tips []netip.Addr
	for _, s := range strings.Split(fl.testerIP, ",") {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil {
			return nil, 2, fmt.Errorf("--tester-ip %q: %v", fl.testerIP, err)
		}
		tips = append(tips, a)
	}
	ports := prof.AcceptUDPDstPorts
	conn, peers, announce, code, err := openLink(fl, ports)
	if err != nil {
		return nil, code, err
	}
	if fl.ctlTimeout <= 0 {
		conn.Close()
		return nil, 2, fmt.Errorf("--control-timeout %v: want a positive duration", fl.ctlTimeout)
	}
	ctl, err := active.DialControl(ctx, fl.ctl)
	if err != nil {
		conn.Close()
		return nil, 2, err
	}
	ctl.Timeout = fl.ctlTimeout
	t, err := active.NewSocketTarget(active.SocketConfig{Name: fl.transport, Conn: conn, Control: ctl, TesterIPs: tips,
		Peers: peers, Ports: ports, Tunnel: announce})
	if err != nil {
		conn.Close()
		ctl.Close()
		return nil, 2, err
	}
	return t, 0, nil
}

// openInproc starts the built-in reference in process, speaking prof, with
// the faults the flags seed.
func openInproc(fl *runFlags, prof *spec.Profile) (active.Target, int, error) {
	if fl.ctl != "" || fl.peers != "" || fl.iface != "" {
		return nil, 2, errors.New("--control, --peer and --iface do not apply to the inproc transport")
	}
	cfg := active.InprocConfig{Planes: fl.planes, Faults: fl.faults, Seed: fl.seed, IPv6: fl.ipv6, Profile: prof}
	t, err := active.NewInproc(cfg)
	if err != nil {
		return nil, 2, err
	}
	return t, 0, nil
}

// openLink opens the tester's side of the udp or afpacket data path: the
// connection, the IUT's addresses (afpacket) and the tunnel address to
// announce (udp); on failure, the exit status to use.
func openLink(fl *runFlags, ports []uint16) (netio.Conn, []netip.Addr, string, int, error) {
	switch fl.transport {
	case "udp":
		if fl.planes < 1 || fl.planes > 8 {
			return nil, nil, "", 2, fmt.Errorf("--planes %d: want 1 to 8", fl.planes)
		}
		macs := make([][6]byte, fl.planes)
		for i := range macs {
			macs[i] = [6]byte{0x02, 0x4d, 0x52, 0x54, 0x00, byte(0x20 + i)}
		}
		local := fl.tunnel
		if local == "" {
			local = tunnelLocal(fl.peers)
		}
		t, err := netio.ListenTunnel(local, fl.peers, macs)
		if err != nil {
			return nil, nil, "", 2, err
		}
		if err := t.Hello(); err != nil {
			t.Close()
			return nil, nil, "", 2, err
		}
		return t, nil, tunnelAnnounce(t.LocalAddr(), fl.peers), 0, nil
	case "afpacket":
		var peers []netip.Addr
		if !netio.AFPacketSupported {
			return nil, nil, "", 127, &active.TransportError{Transport: "afpacket", Unsupported: true, Err: errors.New("AF_PACKET raw sockets need Linux")}
		}
		if fl.iface == "" {
			return nil, nil, "", 2, errors.New("the afpacket transport needs --iface")
		}
		for _, s := range strings.Split(fl.peers, ",") {
			a, err := netip.ParseAddr(strings.TrimSpace(s))
			if err != nil {
				return nil, nil, "", 2, fmt.Errorf("--peer %q: want IP addresses for afpacket", s)
			}
			peers = append(peers, a)
		}
		a, err := netio.OpenAFPacket(strings.Split(fl.iface, ","), ports, true)
		if err != nil {
			return nil, nil, "", 2, err
		}
		return a, peers, "", 0, nil
	}
	return nil, nil, "", 2, fmt.Errorf("unknown transport %q", fl.transport)
}

// tunnelAnnounce is the tester's tunnel address as the peer reaches it:
// the socket's own, or, when bound to the unspecified address, the source
// address the system routes to the peer from.
func tunnelAnnounce(local *net.UDPAddr, peer string) string {
	ip := local.IP
	if ip.IsUnspecified() {
		if ra, err := net.ResolveUDPAddr("udp", peer); err == nil {
			if c, err := net.DialUDP("udp", nil, ra); err == nil {
				ip = c.LocalAddr().(*net.UDPAddr).IP
				c.Close()
			}
		}
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(local.Port))
}

// tunnelLocal picks the tester's tunnel address for a tunnel to peer
// (HOST:PORT): port 0 on the loopback address of the peer's IP version
// when the peer is on the loopback, else on the unspecified address.
func tunnelLocal(peer string) string {
	host, _, err := net.SplitHostPort(peer)
	if err != nil {
		return ":0"
	}
	ip, err := netip.ParseAddr(host)
	switch {
	case err != nil:
		return ":0"
	case ip.Is4() && ip.IsLoopback():
		return "127.0.0.1:0"
	case ip.Is4():
		return "0.0.0.0:0"
	case ip.IsLoopback():
		return "[::1]:0"
	}
	return "[::]:0"
}

// runIsTerminal decides whether run's progress is on by default; tests
// replace it.
var runIsTerminal = isTerminal

// progressWanted: --progress or --progress=false when given, else on
// when w is a terminal.
func progressWanted(fs *flag.FlagSet, flagValue bool, w io.Writer) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "progress" })
	if given {
		return flagValue
	}
	return runIsTerminal(w)
}

// progressPrinter prints one line per case as it ends:
// "[12/42] MRC-EV-ST-101 PASS 0.41s".
func progressPrinter(w io.Writer) func(n, total int, r *conformance.Result, took time.Duration) {
	return func(n, total int, r *conformance.Result, took time.Duration) {
		width := len(strconv.Itoa(total))
		fmt.Fprintf(w, "[%*d/%d] %s %s %.2fs\n", width, n, total, r.Case.ID, r.Verdict, took.Seconds())
	}
}

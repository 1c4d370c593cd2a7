package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openmrc/mrc/netio"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// autostop is tshark's -a: "duration:SEC" or "packets:N".
type autostop struct {
	duration time.Duration
	packets  int
}

func (a *autostop) String() string { return "" }

func (a *autostop) Set(s string) error {
	k, v, ok := strings.Cut(s, ":")
	switch {
	case ok && k == "duration":
		sec, err := strconv.ParseFloat(v, 64)
		if err != nil || sec <= 0 || sec > 1e6 {
			return fmt.Errorf("duration %q: want seconds, more than 0", v)
		}
		a.duration = time.Duration(sec * float64(time.Second))
	case ok && k == "packets":
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("packets %q: want a count, more than 0", v)
		}
		a.packets = n
	default:
		return fmt.Errorf("%q: want duration:SEC or packets:N", s)
	}
	return nil
}

// ifaceList is the repeatable -i: each interface is one plane.
type ifaceList []string

func (l *ifaceList) String() string { return strings.Join(*l, ",") }

func (l *ifaceList) Set(s string) error {
	for _, n := range strings.Split(s, ",") {
		if n == "" {
			return errors.New("empty interface name")
		}
		*l = append(*l, n)
	}
	return nil
}

// captureError is a live capture that could not start (no such
// interface, no privileges): like a file that is not a capture, exit 2.
type captureError struct{ error }

// decodeLive captures MRC frames on the -i interfaces through netio's
// AF_PACKET sockets (both directions, as tshark's capture does) and
// decodes each as it arrives, until -c frames, the -a duration, or
// SIGINT/SIGTERM. Like tshark it says "Capturing on" on stderr once the
// sockets are open and the count of frames captured at the end.
func decodeLive(d *pcap.Decoder, format pcap.OutputFormat, fl *decodeFlags, stdout, stderr io.Writer) error {
	c := d.Codec
	if c == nil {
		c = wire.Default
	}
	conn, err := netio.OpenAFPacket(fl.ifaces, c.Profile().AcceptUDPDstPorts, true)
	if err != nil {
		return captureError{err}
	}
	defer conn.Close()
	ifs := make([]pcap.Interface, len(fl.ifaces))
	for i, n := range fl.ifaces {
		ifs[i] = pcap.Interface{Name: n, LinkType: pcap.LinkTypeEthernet, SnapLen: netio.MaxFrame, Plane: -1}
	}
	quoted := make([]string, len(fl.ifaces))
	for i, n := range fl.ifaces {
		quoted[i] = "'" + n + "'"
	}
	d.Start(time.Now()) // before the first frame can arrive
	fmt.Fprintf(stderr, "Capturing on %s\n", strings.Join(quoted, " and "))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	stop := make(chan struct{})
	defer close(stop)
	var timeout <-chan time.Time
	if fl.autostop.duration > 0 {
		t := time.NewTimer(fl.autostop.duration)
		defer t.Stop()
		timeout = t.C
	}
	// The kernel's drop counts are read before the sockets close: the
	// goroutine that closes them stores them, else the loop reads them.
	var dropped atomic.Pointer[[]uint64]
	go func() {
		select {
		case <-sig:
		case <-timeout:
		case <-stop:
		}
		d := conn.Dropped()
		dropped.Store(&d)
		conn.Close() // ends ReadFrame with ErrClosed
	}()
	limit := fl.count
	if fl.autostop.packets > 0 && (limit == 0 || fl.autostop.packets < limit) {
		limit = fl.autostop.packets
	}
	p := pcap.NewPrinter(stdout, format, d.Codec, d.EVMode)
	var st *pcap.Stats
	if fl.stats {
		st = pcap.NewStats()
	}
	var rec pcap.Record
	n := 0
	for limit == 0 || n < limit {
		f, err := conn.ReadFrame()
		if errors.Is(err, netio.ErrClosed) {
			break
		}
		if err != nil {
			return err
		}
		n++
		fr := pcap.Frame{Number: n, Timestamp: f.At, Interface: f.Plane, Length: len(f.Data), Data: f.Data}
		d.Decode(&fr, &ifs[f.Plane], &rec)
		if fl.filter != nil && !fl.filter.Match(&rec) {
			continue
		}
		if st != nil {
			st.Add(&rec)
			continue
		}
		if err := p.Print(&rec); err != nil {
			return err
		}
		if err := p.Flush(); err != nil { // live: each frame as it comes
			return err
		}
	}
	if st != nil {
		if err := writeStats(st, format, stdout); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "%d packets captured\n", n)
	lost := dropped.Load()
	if lost == nil {
		v := conn.Dropped()
		lost = &v
	}
	reportDropped(stderr, fl.ifaces, *lost)
	return p.Flush()
}

// reportDropped says, for each interface whose socket lost frames, how
// many (the kernel's count: the reader fell behind), as tshark does at
// the end of a capture.
func reportDropped(stderr io.Writer, ifaces []string, dropped []uint64) {
	for i, n := range dropped {
		if n > 0 && i < len(ifaces) {
			fmt.Fprintf(stderr, "%d packets dropped from '%s'\n", n, ifaces[i])
		}
	}
}

package main

import (
	"flag"
	"time"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/internal/cli"
)

// deviationFlags are --deviations and --today, which judge and run share.
type deviationFlags struct{ file, today string }

func (d *deviationFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&d.file, "deviations", "", "deviations file (NAME CASES YYYY-MM-DD REASON per line)")
	fs.StringVar(&d.today, "today", "", "judge deviation expiry against this date (YYYY-MM-DD) instead of today")
}

// load reads the deviations file and the date deviations expire against
// (zero: today); a non-zero code is the exit status of what it refused
// (already reported).
func (d *deviationFlags) load(cmd cli.Command) (devs *conformance.Deviations, today time.Time, code int) {
	if d.file != "" {
		var err error
		if devs, err = conformance.LoadDeviations(d.file); err != nil {
			return nil, today, cmd.Errorf(2, "%v", err)
		}
	}
	if d.today != "" {
		var err error
		if today, err = time.Parse(time.DateOnly, d.today); err != nil {
			return nil, today, cmd.Usagef("--today %q is not a YYYY-MM-DD date", d.today)
		}
	}
	return devs, today, 0
}

// Package cli gives the project's commands (mrc-conform and its
// subcommands, mrc-peer, mrc-sim) one behaviour on their command lines,
// the one users know from the Go tool and tshark:
//
//   - -h, -help and --help print the usage on standard output and exit 0;
//   - a usage error prints one line naming it, then a hint
//     (see 'mrc-conform run -h'), on standard error and exits 2 — never
//     the whole usage;
//   - --version (and mrc-conform version) prints one line built from
//     debug.ReadBuildInfo.
//
// Exit statuses other than 0 and 2 are each command's own (the table in
// the README).
package cli

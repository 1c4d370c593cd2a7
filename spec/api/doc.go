// Package api holds the pinned facts of the OCP MRC API headers (mrc.h,
// mrc_api_ver.h, mrc_ctl.h, mrc_ctl_api_ver.h): every define, enum
// constant, struct field with its type, typedef and function prototype, as
// data (facts.txt) with the upstream commit it was read at. Facts only: no
// comment or text of the headers is kept.
//
// Extract reads headers into facts; Diff compares two tables; Citer finds
// the requirements and Go code that cite a fact. cmd/mrc-apifacts drives
// them for a re-sync, and the package's tests require every Go constant
// that mirrors an upstream one to equal it.
package api

// Package layers is the project's data flow as data: every package's
// layer, from spec up to the commands, and the rule that an import runs
// only down the flow. Its test reads the real import graph (go list) and
// fails on a production import against the flow, on a test import against
// it that is not listed with its reason, on a package no layer names, and
// on a README whose data-flow line or layout table no longer matches.
//
// Its function-size test holds the house rule on small functions: none
// over 100 lines outside generated files and functions whose body is one
// table literal, except those on an explicit allowlist that only shrinks.
// FuncName names a declaration as that rule and CPU profiles do (scripts'
// test of mrc-conform's default.pgo uses it).
package layers

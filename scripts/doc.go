// Package scripts holds the tests of the project's shell scripts
// (scripts/test.sh and what it sources); it has no Go API. bench.sh, which
// regenerates the README's Performance section, is tested with its helper
// in internal/benchfmt.
package scripts

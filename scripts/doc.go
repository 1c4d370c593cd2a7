// Package scripts holds the tests of the project's shell scripts
// (scripts/test.sh and what it sources); it has no Go API.
package scripts

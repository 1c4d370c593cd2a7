// Package spec is MRC as this project implements it: the normative text
// (the Markdown files beside this file), its machine-readable requirement
// registry, the ambiguity register, and the Profile that holds every wire
// choice the public sources leave open.
//
// The OCP MRC 1.0 PDF could not be obtained. Every requirement therefore
// carries its provenance (which public source says it) and a confidence
// (primary source, secondary source, or project decision). Code and tests
// cite requirement IDs such as WIRE-BTH-1; Lookup resolves them.
package spec

//go:build race

package conformance

// raceEnabled: the race detector's runtime allocates as it tracks
// synchronisation, so allocation counts are not the judge's.
const raceEnabled = true

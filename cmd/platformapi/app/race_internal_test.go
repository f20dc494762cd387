//go:build race

package app

// raceEnabled: the race detector slows the runtime enough that timing
// bounds some tests show do not hold under it.
const raceEnabled = true

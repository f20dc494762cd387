//go:build !race

package app

// raceEnabled: see race_internal_test.go.
const raceEnabled = false

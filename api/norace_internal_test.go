//go:build !race

package api

// raceEnabled: see race_internal_test.go.
const raceEnabled = false

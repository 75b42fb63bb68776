//go:build !race

package a2acall_test

// raceOn: the race detector is on (about ten times slower).
const raceOn = false

//go:build !race

package toolset_test

const raceEnabled = false

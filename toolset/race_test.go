//go:build race

package toolset_test

// raceEnabled reports a -race build, where sync.Pool drops items at random.
const raceEnabled = true

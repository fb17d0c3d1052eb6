// Package filelock is an exclusive lock of a file's path, across
// processes where the system has flock(2) (package artifact's directory
// store, mcptools' token files).
package filelock

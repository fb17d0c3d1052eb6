// Package docstest keeps the commands and programs of README.md and
// docs/*.md working offline. It has no code of its own: its tests read the
// markdown, and run every command of each ```sh block and every program
// (a ```go block that starts with "package main") of README.md, with no
// API key, as a newcomer would.
//
// A command that needs what an offline machine lacks (an API key, a
// Google Cloud project, the network, a module of its own) follows a
// comment line in its block that says so, which skips the rest of the
// block:
//
//	# docs-test: skip (needs a Google Cloud project)
//
// and is skipped by name; so is a go test of the whole module, which
// would run these tests again. The examples the commands run (go run
// ./examples/chat, ./examples/server, ./examples/mcpserver,
// ./examples/openapi) are built once, and a go wrapper first in PATH runs
// the built binaries, so that a command runs as written. A command that
// serves (examples/server, chat -web) is started, checked to listen, and
// stopped once its file's other commands have run; the port of the docs,
// localhost:8080, is replaced by a free one. The README's programs are
// built in a module of their own that requires this one through a replace
// directive; a program that serves is checked to listen, the others to
// exit cleanly. README.md's "Your first program" is followed step by
// step in a directory of its own (TestFirstProgram): its go mod init, go
// get and go run, offline on the module cache, with only a replace
// directive added.
package docstest

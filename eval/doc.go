// Package eval evaluates an agent under go test: eval sets of cases, each
// a conversation with what the agent should call and answer, run against
// an agent and scored with metrics that explain themselves. Sets are ADK's
// eval sets, read and written in ADK's formats.
package eval

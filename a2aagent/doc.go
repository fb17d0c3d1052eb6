// Package a2aagent speaks the Agent2Agent protocol (A2A 0.3, JSON-RPC)
// both ways: [Handler] serves an agent to other agents, and [RemoteTool]
// makes a remote A2A agent a tool of ours.
package a2aagent

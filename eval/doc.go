// Package eval evaluates an agent under go test: whether it still calls
// the right tools and answers well after a change of prompt, model or
// tool. An eval set is a list of cases, each a conversation with what the
// agent should call and answer at each turn; [Test] runs each case against
// an [agent.Agent] as a subtest, scores it with metrics, and fails it,
// saying why, when a score is below its threshold.
//
//	func TestAgent(t *testing.T) {
//		set, err := eval.LoadFile("testdata/weather.evalset.json") // an ADK eval set
//		if err != nil {
//			t.Fatal(err)
//		}
//		client := geminitest.Replay(t, "", nil).Client() // recorded once, replayed offline
//		eval.Test(t, set, eval.Options{
//			Agent: newAgent(client),
//			Judge: &eval.Judge{Models: client.Models}, // for the judged metrics
//			Runs:  2,
//		})
//	}
//
// # Eval sets
//
// Sets are ADK's (google/adk-python), field for field, so that a set
// written for ADK runs here, scores the same, and a set saved here runs in
// ADK. [LoadFile] reads *.evalset.json files (keys in snake_case or
// camelCase), the older *.test.json lists of turns, the named-list format,
// and test_config.json criteria, which it also reads beside an eval set as
// ADK's AgentEvaluator does; unknown keys are kept and written back by
// [Set.WriteFile]. A file it cannot use is a [*FormatError] that names the
// field (eval_cases[2].conversation[0].user_content: required). A set can
// be built in Go as well: [Set], [Case], [Turn], [UserTurn].
//
// A case is scripted, its [Turn]s giving each user message and what the
// agent is expected to call and answer, or a [Scenario] that a simulated
// user plays out ([UserSimulator], on Gemini).
//
// # Runs
//
// Each run of a case starts from an empty conversation, or from what
// Options.Start returns (a stored session: [FromSession]), and runs the
// agent once per turn on the conversation so far. Options.Runs runs each
// case several times, for models that do not answer the same way twice;
// Options.Parallel bounds the runs going at once; Options.CaseTimeout
// bounds each. A [Run] keeps everything: the agent's results turn by turn
// (history, tool calls and results, timings), usage, latency, the error
// that stopped it.
//
// # Approvals
//
// The agent runs with Agent.Run, where nobody is asked about the calls its
// Config.NeedsApproval picks. Options.Approve decides them instead, as a
// person would: by default [ReplayDecisions], which replays the decisions
// the case records (the call the expected turn shows denied is denied with
// the same reason, one it shows answered runs; a call it does not have is
// denied), so that a conversation that had approvals, saved as a case,
// runs again as it ran. An agent with an Interceptor of its own decides
// its approvals itself.
//
// # Metrics
//
// The metrics are ADK's, computed as ADK computes them (the sources are
// cited in the code), with explanations:
//
//   - [ToolTrajectory] (tool_trajectory_avg_score): the tool calls of each
//     turn against the expected ones, exactly, in order or in any order,
//     arguments compared exactly, as a subset, or not at all; a call that
//     was not run (denied, unanswered) never matches one that ran;
//   - [ResponseMatch] (response_match_score): ROUGE-1 of the final answer
//     against the expected one, with NLTK's Porter stemmer, as ADK scores
//     it ([Rouge1]);
//   - [FinalResponseMatch] (final_response_match_v2): a [Judge] decides
//     whether the answer is valid against the expected one;
//   - [ResponseQuality] and [ToolUseQuality]
//     (rubric_based_final_response_quality_v1,
//     rubric_based_tool_use_quality_v1): a judge checks the answer, or the
//     tool calls, against rubrics;
//   - [Func] and [TurnFunc]: a metric written in Go.
//
// Without Options.Metrics, the set's criteria choose them, and without
// criteria ADK's defaults do ([DefaultCriteria]). Judges are Gemini
// models that answer with a typed verdict through [agent.RunTyped]; each
// turn is judged several times and the majority wins; their tokens are
// counted apart from the agent's. A judge that gives no verdict (an
// answer that is not one, a timeout, a refusal) leaves the turn not
// evaluated, and says why.
//
// The judges' prompts tag what they show: <user_message>, <agent_answer>,
// <reference_answer>, <developer_instructions>, <available_tools>,
// <tool_calls>, <final_answer>, and <properties> as lines "- id ID: text",
// so that a stand-in judge can read them (examples/eval has one).
//
// # Scores
//
// As in ADK, a metric scores each turn, a run scores the mean of its turns
// (for the rubric metrics, the mean of every rubric verdict), and passes
// when the score reaches the threshold. Over several runs, a case's score
// is the mean of the metric's turn scores over all runs (ADK's
// AgentEvaluator). A case passes only when every metric passed and every
// run ran to its end, as ADK's AgentEvaluator decides: it fails when a
// metric is below its threshold or a run failed, and is not evaluated,
// which is not a pass either, when a metric has no score (no judge, a
// judge outage). [Evaluate]'s CaseResult.Status and Report.Status say
// so, and [Test] fails every case that did not pass. A run's status in the
// results follows adk eval's rule (failed if a metric failed, else passed
// if one passed). The turns a run never reached, an error having stopped
// it, are not scored: their turn scores are not evaluated, and so are the
// metrics of a run none of whose turns ran. The
// [Report] is a value first: [Report.Table] renders it, and it marshals as
// ADK's EvalSetResult ([Report.MarshalJSON]), which ADK's tools read.
//
// # Differences from ADK
//
// A call without arguments and one with {} match (ADK tells them apart).
// A call that was denied or never answered does not match one that ran:
// ADK compares names and arguments only.
// ANY_ORDER with argument subsets finds a full matching where one exists;
// with exact arguments it decides as ADK does. The judges answer with a
// typed verdict rather than text ADK parses with regular expressions, and
// their prompts are this package's own. The old formats' made-up IDs and
// time stamps are deterministic here.
package eval

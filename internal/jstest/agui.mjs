// @ag-ui/client's HttpAgent against our agui handler: runAgent applies the
// client's schemas, verifier and reducer to every event, and rejects on a
// violation. AGUI_URL is the handler's URL. The Go test (agentserver/agui)
// scripts the model as for the AI SDK: get_weather answers for a city,
// needs approval for Oslo, get_location is a frontend tool, and "fail"
// makes the model fail.
import assert from 'node:assert/strict';
import { runScenarios } from './scenarios.mjs';
import { HttpAgent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas'; // @ag-ui/client's own, pinned by the lockfile

const url = process.env.AGUI_URL;
if (!url) throw new Error('AGUI_URL is not set');

let seq = 0;
const id = () => `id-${++seq}`;

// run runs the agent once and returns the events it saw, in order.
async function run(agent, params = {}) {
  const events = [];
  const result = await agent.runAgent({ runId: id(), ...params }, { onEvent: ({ event }) => { events.push(event); } });
  return { result, events };
}

function ask(agent, content) { agent.addMessage({ id: id(), role: 'user', content }); }

const lastOf = (events) => events.at(-1);
const toolMessages = (agent) => agent.messages.filter((m) => m.role === 'tool');
const answer = (agent) => agent.messages.filter((m) => m.role === 'assistant' && m.content).map((m) => m.content).join('\n');
const toolCalls = (agent) => agent.messages.flatMap((m) => m.toolCalls ?? []);

// A HttpAgent that reconnects: HttpAgent has no connect of its own.
class ConnectingAgent extends HttpAgent {
  connect(input) { return this.run(input); }
}

const scenarios = {
  // The stop button: POST …/cancel stops the run while its call runs; the
  // agent's own run ends with the call's result and outcome cancelled,
  // and the next message is taken at once.
  async stop() {
    const agent = new HttpAgent({ url, threadId: 'ag-stop' });
    ask(agent, 'What is the weather at the Gate?');
    const events = [];
    const running = agent.runAgent({ runId: id() }, { onEvent: ({ event }) => { events.push(event); } });
    for (let i = 0; i < 2000 && !events.some((e) => e.type === 'TOOL_CALL_END'); i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    const res = await fetch(`${url}/cancel`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ threadId: 'ag-stop' }),
    });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).state, 'cancelled');
    await running;
    const fin = lastOf(events);
    assert.equal(fin.type, 'RUN_FINISHED');
    assert.equal(fin.outcome.type, 'cancelled');
    assert.equal(toolMessages(agent).length, 1, 'the stopped call is answered');
    ask(agent, 'What is the weather in Paris?');
    const next = await run(agent);
    assert.equal(lastOf(next.events).type, 'RUN_FINISHED');
    assert.match(answer(agent), /Paris: sunny/);
  },

  // Text and two parallel tool calls.
  async run() {
    const agent = new HttpAgent({ url, threadId: 'ag-run' });
    ask(agent, 'What is the weather in Paris and Tokyo?');
    const { events } = await run(agent);
    assert.equal(events[0].type, 'RUN_STARTED');
    const fin = lastOf(events);
    assert.equal(fin.type, 'RUN_FINISHED');
    assert.equal(fin.outcome?.type ?? 'success', 'success');
    assert.ok(fin.usage[0].totalTokens > 0, JSON.stringify(fin));
    assert.ok(events.some((e) => e.type === 'STEP_STARTED'));
    assert.equal(toolCalls(agent).length, 2);
    assert.equal(toolMessages(agent).length, 2);
    assert.deepEqual(toolCalls(agent).map((c) => JSON.parse(c.function.arguments).city).sort(), ['Paris', 'Tokyo']);
    assert.match(answer(agent), /Paris: sunny/);
    // The thread goes on: the server sends the model its own history.
    ask(agent, 'Thanks, that is all');
    const second = await run(agent);
    assert.equal(lastOf(second.events).type, 'RUN_FINISHED');
    assert.match(answer(agent), /Glad to help/);
  },

  // An approval round trip through interrupts and resume.
  async approval() {
    const agent = new HttpAgent({ url, threadId: 'ag-approval' });
    ask(agent, 'What is the weather in Oslo and Paris?');
    const { events } = await run(agent);
    const fin = lastOf(events);
    assert.equal(fin.type, 'RUN_FINISHED');
    assert.equal(fin.outcome.type, 'interrupt');
    assert.equal(agent.pendingInterrupts.length, 1);
    const [interrupt] = agent.pendingInterrupts;
    assert.equal(interrupt.reason, 'tool_call');
    assert.ok(new Date(interrupt.expiresAt) > new Date());
    const oslo = toolCalls(agent).find((c) => JSON.parse(c.function.arguments).city === 'Oslo');
    assert.equal(interrupt.toolCallId, oslo.id);
    // Paris needs no approval: its result came before the interrupt.
    assert.equal(toolMessages(agent).length, 1);
    // The client itself refuses to go on without answering the interrupt.
    await assert.rejects(agent.runAgent({ runId: id() }), /pending interrupt/);

    const resumed = await run(agent, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
    assert.equal(lastOf(resumed.events).type, 'RUN_FINISHED');
    assert.equal(agent.pendingInterrupts.length, 0);
    assert.equal(toolMessages(agent).length, 2);
    assert.match(answer(agent), /Oslo: sunny/);

    // A denial: the model reads the reason.
    ask(agent, 'Now only Oslo');
    await run(agent);
    const [again] = agent.pendingInterrupts;
    await run(agent, { resume: [{ interruptId: again.id, status: 'resolved', payload: { approved: false, reason: 'not today' } }] });
    assert.match(answer(agent), /denied: not today/);
  },

  // A frontend tool: the run ends with its call pending; the tool
  // message of the next run answers it.
  async frontendTool() {
    const tools = [{ name: 'get_location', description: 'Where the user is', parameters: { type: 'object', properties: {} } }];
    const agent = new HttpAgent({ url, threadId: 'ag-browser' });
    ask(agent, 'What is the weather where I am?');
    const { events } = await run(agent, { tools });
    const fin = lastOf(events);
    assert.equal(fin.type, 'RUN_FINISHED');
    assert.equal(fin.outcome.type, 'success');
    const call = toolCalls(agent).find((c) => c.function.name === 'get_location');
    assert.deepEqual(fin.outcome.pendingToolCallIds, [call.id]);
    agent.addMessage({ id: id(), role: 'tool', toolCallId: call.id, content: JSON.stringify({ city: 'Lyon' }) });
    const second = await run(agent, { tools });
    assert.equal(lastOf(second.events).type, 'RUN_FINISHED');
    assert.match(answer(agent), /Lyon: sunny/);
  },

  // Reconnect to a run that waits: connectAgent replays it from its
  // start, through the same verifier; then another agent resumes it.
  async connect() {
    const first = new HttpAgent({ url, threadId: 'ag-connect' });
    ask(first, 'What is the weather in Oslo?');
    await run(first);
    assert.equal(first.pendingInterrupts.length, 1);

    const reloaded = new ConnectingAgent({ url: `${url}/connect`, threadId: 'ag-connect', initialMessages: [first.messages[0]] });
    const events = [];
    await reloaded.connectAgent({ runId: id() }, { onEvent: ({ event }) => { events.push(event); } });
    assert.equal(lastOf(events).type, 'RUN_FINISHED');
    assert.equal(lastOf(events).outcome.type, 'interrupt');
    assert.equal(reloaded.pendingInterrupts[0].id, first.pendingInterrupts[0].id);
    assert.equal(toolCalls(reloaded)[0].id, toolCalls(first)[0].id);

    const resumer = new HttpAgent({ url, threadId: 'ag-connect', initialMessages: reloaded.messages });
    await run(resumer, { resume: [{ interruptId: reloaded.pendingInterrupts[0].id, status: 'resolved', payload: { approved: true } }] });
    assert.match(answer(resumer), /Oslo: sunny/);

    // Nothing runs any more: connect is an empty run.
    const idle = new ConnectingAgent({ url: `${url}/connect`, threadId: 'ag-connect' });
    const none = [];
    await idle.connectAgent({ runId: id() }, { onEvent: ({ event }) => { none.push(event); } });
    assert.deepEqual(none.map((e) => e.type), ['RUN_STARTED', 'RUN_FINISHED']);
  },

  // A reload while a run waits for approval, by a page that knows
  // nothing: the messages route gives the thread's history and the
  // waiting run's question; connect shows the run and the call that
  // waits; the stock HttpAgent approves it, and the run finishes. Later
  // loads show the whole turn, the question once.
  async reload() {
    const threadId = 'ag-reload';
    const before = new HttpAgent({ url, threadId });
    ask(before, 'What is the weather in Paris?');
    await run(before);
    ask(before, 'What is the weather in Oslo?');
    await run(before);
    assert.equal(before.pendingInterrupts.length, 1);

    // The reloaded page: nothing in memory.
    const snapshot = await (await fetch(`${url}/messages?threadId=${threadId}`)).json();
    const parsed = EventSchemas.safeParse(snapshot);
    assert.ok(parsed.success, `${parsed.error} ${JSON.stringify(snapshot)}`);
    const users = snapshot.messages.filter((m) => m.role === 'user').map((m) => m.content);
    assert.deepEqual(users, ['What is the weather in Paris?', 'What is the weather in Oslo?']);
    assert.equal(snapshot.messages.at(-1).role, 'user', 'the waiting run shows its question, and nothing more yet');

    const page = new ConnectingAgent({ url: `${url}/connect`, threadId, initialMessages: snapshot.messages });
    const events = [];
    await page.connectAgent({ runId: id() }, { onEvent: ({ event }) => { events.push(event); } });
    assert.equal(lastOf(events).outcome.type, 'interrupt');
    assert.equal(page.pendingInterrupts.length, 1);
    const [interrupt] = page.pendingInterrupts;
    const oslo = toolCalls(page).find((c) => c.id === interrupt.toolCallId);
    assert.equal(JSON.parse(oslo.function.arguments).city, 'Oslo');
    assert.equal(interrupt.id, before.pendingInterrupts[0].id);

    const agent = new HttpAgent({ url, threadId, initialMessages: page.messages });
    const resumed = await run(agent, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
    assert.equal(lastOf(resumed.events).type, 'RUN_FINISHED');
    assert.equal(lastOf(resumed.events).outcome?.type ?? 'success', 'success');
    assert.equal(agent.pendingInterrupts.length, 0);
    assert.match(answer(agent), /Oslo: sunny/);

    const after = await (await fetch(`${url}/messages?threadId=${threadId}`)).json();
    assert.deepEqual(after.messages.filter((m) => m.role === 'user').map((m) => m.content), users);
    assert.match(after.messages.filter((m) => m.role === 'tool').map((m) => m.content).join('\n'), /Oslo/);
    assert.equal(after.messages.at(-1).role, 'assistant');
    // The question keeps its id once stored.
    assert.equal(after.messages.find((m) => m.content === users[1]).id, snapshot.messages.at(-1).id);
  },


  async failure() {
    const agent = new HttpAgent({ url, threadId: 'ag-fail' });
    ask(agent, 'please fail');
    const events = [];
    let failed;
    try {
      await agent.runAgent({ runId: id() }, { onEvent: ({ event }) => { events.push(event); } });
    } catch (err) {
      failed = err;
    }
    const last = lastOf(events);
    assert.equal(last.type, 'RUN_ERROR', JSON.stringify(events));
    assert.equal(last.message, 'the server could not authenticate with the model');
    assert.equal(last.code, 'model_unauthorized');
    assert.ok(!JSON.stringify(events).includes('SECRET'));
    void failed; // runAgent may or may not reject on RUN_ERROR; the events say what happened
  },

  // A running call's progress: ACTIVITY_SNAPSHOT events that the client's
  // reducer turns into one activity message per call, the last report
  // its content; the thread goes on with it among the messages sent back.
  async progress() {
    const agent = new HttpAgent({ url, threadId: 'ag-progress' });
    ask(agent, 'What is the weather in Bergen?');
    const { events } = await run(agent);
    assert.equal(lastOf(events).type, 'RUN_FINISHED');
    const [call] = toolCalls(agent);
    const snapshots = events.filter((e) => e.type === 'ACTIVITY_SNAPSHOT');
    assert.ok(snapshots.length > 0, 'no ACTIVITY_SNAPSHOT');
    const resultAt = events.findIndex((e) => e.type === 'TOOL_CALL_RESULT');
    assert.ok(events.findLastIndex((e) => e.type === 'ACTIVITY_SNAPSHOT') < resultAt, 'progress after the result');
    const activities = agent.messages.filter((m) => m.role === 'activity');
    assert.equal(activities.length, 1, JSON.stringify(agent.messages));
    assert.equal(activities[0].activityType, 'tool-progress');
    assert.deepEqual(activities[0].content, { toolCallId: call.id, done: 3, total: 3, message: 'station 3 of 3' });
    assert.match(answer(agent), /Bergen: sunny/);
    ask(agent, 'Thanks, that is all');
    const second = await run(agent);
    assert.equal(lastOf(second.events).type, 'RUN_FINISHED');
  },

  // Bad input is refused before anything runs: the client reports the
  // server's 400.
  async badTool() {
    const agent = new HttpAgent({ url, threadId: 'ag-bad' });
    ask(agent, 'hi');
    const tools = [{ name: 'bad name', description: 'x', parameters: { type: 'object' } }];
    await assert.rejects(agent.runAgent({ runId: id(), tools }), /HTTP 400.*bad_tool/);
  },

  // After the others: each thread's stored messages (GET …/messages) are
  // a MESSAGES_SNAPSHOT the client's own schema takes, with every tool
  // call answered; an agent started from them goes on.
  async history() {
    for (const threadId of ['ag-run', 'ag-approval', 'ag-browser', 'ag-connect', 'ag-progress', 'ag-stop']) {
      const res = await fetch(`${url}/messages?threadId=${threadId}`);
      assert.equal(res.status, 200);
      const snapshot = await res.json();
      const parsed = EventSchemas.safeParse(snapshot);
      assert.ok(parsed.success, `${threadId}: ${parsed.error} ${JSON.stringify(snapshot)}`);
      assert.equal(snapshot.type, 'MESSAGES_SNAPSHOT');
      const { messages } = snapshot;
      assert.equal(messages[0].role, 'user', threadId);
      const called = messages.flatMap((m) => m.toolCalls ?? []).map((c) => c.id);
      const answered = messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId);
      assert.deepEqual(answered, called, `${threadId}: every call answered, in order`);
    }
    const { messages } = await (await fetch(`${url}/messages?threadId=ag-approval`)).json();
    assert.ok(messages.some((m) => m.role === 'tool' && m.error), 'the denial is an error');
    const agent = new HttpAgent({ url, threadId: 'ag-approval', initialMessages: messages });
    ask(agent, 'What is the weather in Paris?');
    const { events } = await run(agent);
    assert.equal(lastOf(events).type, 'RUN_FINISHED');
    assert.match(answer(agent), /Paris: sunny/);
  },

  // Files (run by TestOfficialClientFiles, on a server that keeps them): a
  // tool's chart and CSV come in its TOOL_CALL_RESULT as AG-UI 1.0 media
  // parts whose source is a URL, which downloads them; a user's upload (a
  // document part with data) is kept, and the messages route links it.
  async 'only:files'() {
    const origin = new URL(url).origin;
    const agent = new HttpAgent({ url, threadId: 'ag-files' });
    ask(agent, 'Draw a chart of the weather');
    const { events } = await run(agent);
    assert.equal(lastOf(events).type, 'RUN_FINISHED');
    const result = events.find((e) => e.type === 'TOOL_CALL_RESULT');
    assert.ok(Array.isArray(result.content), JSON.stringify(result));
    assert.equal(result.content[0].type, 'text');
    assert.match(result.content[0].text, /bar chart/);
    const media = result.content.slice(1);
    assert.deepEqual(media.map((p) => p.type).sort(), ['document', 'image']);
    for (const p of media) {
      assert.equal(p.source.type, 'url');
      const res = await fetch(origin + p.source.value);
      assert.equal(res.status, 200, p.source.value);
      const body = new Uint8Array(await res.arrayBuffer());
      if (p.type === 'image') {
        assert.equal(p.source.mimeType, 'image/png');
        assert.equal(p.metadata.filename, 'chart.png');
        assert.deepEqual([...body.slice(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
      } else {
        assert.match(new TextDecoder().decode(body), /^city,temperature\n/);
      }
    }
    const tool = toolMessages(agent)[0];
    assert.ok(Array.isArray(tool.content) && tool.content.length === 3, JSON.stringify(tool));

    agent.addMessage({ id: id(), role: 'user', content: [
      { type: 'text', text: 'What is in this file?' },
      { type: 'document', source: { type: 'data', value: Buffer.from('remember the milk').toString('base64'), mimeType: 'text/plain' }, metadata: { filename: 'note.txt' } },
    ] });
    const second = await run(agent);
    assert.equal(lastOf(second.events).type, 'RUN_FINISHED');
    const res = await fetch(`${url}/messages?threadId=ag-files`);
    const snapshot = await res.json();
    EventSchemas.parse(snapshot);
    const parts = snapshot.messages.filter((m) => Array.isArray(m.content)).flatMap((m) => m.content);
    const note = parts.find((p) => p.metadata?.filename === 'note.txt');
    assert.ok(note && note.source.type === 'url', JSON.stringify(snapshot.messages));
    assert.equal(await (await fetch(origin + note.source.value)).text(), 'remember the milk');
    assert.ok(parts.some((p) => p.type === 'image' && p.source.value === '/artifacts/ag-files/chart.png?version=1'));
  },
};

await runScenarios(scenarios);

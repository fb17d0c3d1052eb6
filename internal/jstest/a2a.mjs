// @a2a-js/sdk's client against our a2aagent handler, in the mode A2A_MODE
// says: "jsonrpc" and "rest", its default 1.0 mode over JSON-RPC or
// HTTP+JSON; "legacy", its legacy mode, which speaks A2A 0.3 to the 0.3
// endpoint and translates every answer to 1.0 shapes, checking them.
// A2A_URL is the base URL of the tests' server (package a2aagent's, in
// another process): the desk agent, whose model calls get_weather for
// "weather in <city>", send_email (which needs approval) for "email <to>"
// and "email two", and hold (released by POST /test/release?key=) for
// "hold <key>", and count (which reports its progress) for "count to
// <n>". A request authenticates with "Authorization: Bearer <user>".
// A2A_KEY prefixes the hold keys (each mode holds its own).
import assert from 'node:assert/strict';
import http from 'node:http';
import { runScenarios } from './scenarios.mjs';
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory, DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const base = process.env.A2A_URL;
if (!base) throw new Error('A2A_URL is not set');
const mode = process.env.A2A_MODE ?? 'legacy';
const key = process.env.A2A_KEY ?? 'js';
// The endpoint each mode speaks to.
const endpoint = { jsonrpc: '/a2a/v1', rest: '/a2a/v1/rest', legacy: '/a2a' }[mode];
if (!endpoint) throw new Error(`A2A_MODE ${mode} is none of jsonrpc, rest, legacy`);
// The paths the clients' requests went to.
const paths = new Set();

// client returns a client of user, in the mode's version and binding.
async function client(user) {
  const fetchImpl = (url, init = {}) => {
    paths.add(new URL(url).pathname);
    return fetch(url, { ...init, headers: { ...init.headers, Authorization: `Bearer ${user}` } });
  };
  if (mode !== 'legacy') {
    const factory = new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      preferredTransports: [mode === 'rest' ? 'HTTP+JSON' : 'JSONRPC'],
    });
    return factory.createFromUrl(base);
  }
  const legacyCompat = { enabled: true };
  const resolver = new DefaultAgentCardResolver({ legacyCompat });
  const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ legacyCompat, fetchImpl })], cardResolver: resolver });
  // The card lists 1.0's interfaces first, and this client takes any
  // interface of 1.0 when there is one: 0.3's alone, for 0.3.
  const card = await resolver.resolve(base);
  const legacy = card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3');
  assert.equal(legacy.length, 1);
  return factory.createFromNormalizedAgentCard({ ...card, supportedInterfaces: legacy });
}

const listRequest = (extra = {}) => ({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', ...extra });

let seq = 0;
const text = (value, extra = {}) => ({ message: { messageId: `m${++seq}`, role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value } }], ...extra } });

// decision answers the confirmation of call id.
const decision = (task, id, confirmed) => ({
  message: {
    messageId: `m${++seq}`, role: Role.ROLE_USER, taskId: task.taskId ?? task.id, contextId: task.contextId,
    parts: [{ content: { $case: 'data', value: { id, name: 'adk_request_confirmation', response: { confirmed } } }, metadata: { adk_type: 'function_response' } }],
  },
});

// collect reads stream's events to its end, or up to the first that until
// holds of, leaving the stream open for more (a for await loop would
// close it on break).
async function collect(stream, until) {
  const events = [];
  for (;;) {
    const { value, done } = await stream.next();
    if (done) return events;
    events.push(value.payload);
    if (until?.(value.payload)) return events;
  }
}

const dataParts = (events, type) => events.filter((e) => e.$case === 'artifactUpdate')
  .flatMap((e) => e.value.artifact.parts).filter((p) => p.content.$case === 'data' && p.metadata?.adk_type === type).map((p) => p.content.value);
const textOf = (events) => events.filter((e) => e.$case === 'artifactUpdate')
  .flatMap((e) => e.value.artifact.parts).filter((p) => p.content.$case === 'text' && !p.metadata?.adk_thought).map((p) => p.content.value).join('');
const last = (events) => events.at(-1);
const confirmations = (status) => status.message.parts.filter((p) => p.content.$case === 'data').map((p) => p.content.value);

const scenarios = {
  // The card, and a streamed run: calls and results as ADK's data parts,
  // text as it streams, the final status with the usage; tasks/get.
  async stream() {
    const c = await client('alice');
    const card = await c.getAgentCard();
    assert.equal(card.name, 'Weather Desk');
    assert.ok(card.capabilities.streaming);
    assert.deepEqual(card.skills.map((s) => s.name), ['Weather Desk', 'get_weather', 'send_email', 'hold', 'count']);
    const events = await collect(c.sendMessageStream(text('weather in Lima')));
    assert.equal(events[0].$case, 'task');
    assert.equal(events[0].value.status.state, TaskState.TASK_STATE_SUBMITTED);
    const calls = dataParts(events, 'function_call');
    assert.equal(calls.length, 1);
    assert.equal(calls[0].name, 'get_weather');
    assert.deepEqual(calls[0].args, { city: 'Lima' });
    assert.deepEqual(dataParts(events, 'function_response')[0].response, { result: 'sunny in Lima' });
    assert.equal(textOf(events), 'Done: get_weather {"result":"sunny in Lima"}');
    const fin = last(events);
    assert.equal(fin.$case, 'statusUpdate');
    assert.equal(fin.value.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.ok(fin.value.metadata.adk_usage_metadata.totalTokenCount > 0);
    const task = await c.getTask({ id: events[0].value.id });
    assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(task.artifacts.at(-1).parts[0].content.value, 'Done: get_weather {"result":"sunny in Lima"}');
  },

  // A running call's progress: working statuses whose message says it in
  // a sentence and holds it as a data part; the last report among them.
  async progress() {
    const c = await client('alice');
    const events = await collect(c.sendMessageStream(text('count to 3')));
    const progress = events.filter((e) => e.$case === 'statusUpdate' && e.value.status.state === TaskState.TASK_STATE_WORKING && e.value.status.message);
    assert.ok(progress.length > 0, 'no progress');
    const parts = progress.at(-1).value.status.message.parts;
    assert.equal(parts[0].content.value, 'count: 3 of 3, step 3');
    assert.equal(parts[1].metadata.toolnexus_tool_progress, true);
    assert.deepEqual({ ...parts[1].content.value, id: undefined }, { id: undefined, name: 'count', done: 3, total: 3, message: 'step 3' });
    assert.equal(last(events).value.status.state, TaskState.TASK_STATE_COMPLETED);
  },

  // Approvals through input-required: one decision, the same again
  // (refused), an unknown call (refused), then the last one.
  async approval() {
    const c = await client('alice');
    const events = await collect(c.sendMessageStream(text('email two')));
    const waiting = last(events).value;
    assert.equal(waiting.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const ids = confirmations(waiting.status).map((v) => v.id);
    assert.equal(ids.length, 2);
    assert.equal(confirmations(waiting.status)[0].args.originalFunctionCall.name, 'send_email');
    const again = last(await collect(c.sendMessageStream(decision(waiting, ids[0], true)))).value;
    assert.equal(again.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    await assert.rejects(c.sendMessage(decision(waiting, ids[0], true)), /decided already/);
    await assert.rejects(c.sendMessage(decision(waiting, 'no-such-call', true)), /no-such-call/);
    const done = await c.sendMessage(decision(waiting, ids[1], false));
    assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.match(done.artifacts.at(-1).parts[0].content.value, /sent to ann/);
    await assert.rejects(c.sendMessage(decision(waiting, ids[1], true)), (err) => err.name === 'UnsupportedOperationError');
  },

  // tasks/cancel stops the run and its tool; the stream ends canceled.
  async cancel() {
    const c = await client('alice');
    const stream = c.sendMessageStream(text(`hold ${key}1`));
    // The tool's progress says it started: cancel stops it.
    const first = await collect(stream, (e) => e.$case === 'statusUpdate' && e.value.status.message?.parts[0]?.content.value === `hold: 0, holding ${key}1`);
    const id = first[0].value.id;
    const canceled = await c.cancelTask({ id });
    assert.equal(canceled.status.state, TaskState.TASK_STATE_CANCELED);
    const rest = await collect(stream);
    assert.equal(last(rest).value.status.state, TaskState.TASK_STATE_CANCELED);
  },

  // A client that drops its stream resubscribes: the task as it stands,
  // then the rest of the run.
  async resubscribe() {
    const c = await client('alice');
    const abort = new AbortController();
    let id;
    try {
      for await (const ev of c.sendMessageStream(text(`hold ${key}2`), { signal: abort.signal })) {
        if (ev.payload.$case === 'task') id = ev.payload.value.id;
        if (dataParts([ev.payload], 'function_call').length > 0) abort.abort();
      }
    } catch (err) {
      if (err.name !== 'AbortError') throw err;
    }
    const stream = c.resubscribeTask({ id });
    const [snapshot] = await collect(stream, () => true);
    assert.equal(snapshot.$case, 'task');
    assert.equal(snapshot.value.status.state, TaskState.TASK_STATE_WORKING);
    assert.equal(snapshot.value.artifacts[0].parts[0].content.value.name, 'hold');
    const released = await fetch(`${base}/test/release?key=${key}2`, { method: 'POST' });
    assert.equal(released.status, 200);
    const rest = await collect(stream);
    assert.deepEqual(dataParts(rest, 'function_response')[0].response, { result: `released ${key}2` });
    assert.equal(last(rest).value.status.state, TaskState.TASK_STATE_COMPLETED);
  },

  // Another user's task is not found, whatever is asked of it.
  async otherUser() {
    const alice = await client('alice');
    const bob = await client('bob');
    const task = await alice.sendMessage(text('email dan'));
    assert.equal(task.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    await assert.rejects(bob.getTask({ id: task.id }), (err) => err.name === 'TaskNotFoundError');
    await assert.rejects(bob.cancelTask({ id: task.id }), (err) => err.name === 'TaskNotFoundError');
    await assert.rejects(collect(bob.resubscribeTask({ id: task.id })), (err) => err.name === 'TaskNotFoundError' || /not found/.test(err.message));
    const confirmation = confirmations(task.status)[0];
    await assert.rejects(bob.sendMessage(decision(task, confirmation.id, true)), (err) => err.name === 'TaskNotFoundError');
    assert.equal((await alice.getTask({ id: task.id })).status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  },

  // Push notifications: a webhook of a working task, on loopback (the
  // desk allows it), gets the task as it stands, then completed, with the
  // config's token and credentials, in the mode's version (1.0: a
  // StreamResponse; legacy: 0.3's Task); the config is read back and
  // listed, another user's calls find no task, and it is deleted.
  async push() {
    const got = [];
    let wake = () => {};
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => { body += d; });
      req.on('end', () => {
        got.push({ headers: req.headers, body: JSON.parse(body) });
        res.end();
        wake();
      });
    });
    await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const next = async (n) => {
      while (got.length < n) await new Promise((resolve) => { wake = resolve; });
      return got[n - 1];
    };
    // The task and its state, as the mode's version says them.
    const seen = (n) => (mode === 'legacy' ? { id: n.body.id, state: n.body.status.state } : { id: n.body.task.id, state: n.body.task.status.state });
    try {
      const c = await client('alice');
      const stream = c.sendMessageStream(text(`hold ${key}3`));
      const first = await collect(stream, (e) => dataParts([e], 'function_call').length > 0);
      const taskId = first[0].value.id;
      const config = {
        tenant: '', id: 'hook', taskId, url: `http://127.0.0.1:${receiver.address().port}/hook`, token: 'tok-js',
        authentication: { scheme: 'Bearer', credentials: 'secret-js' },
      };
      const set = await c.createTaskPushNotificationConfig(config);
      assert.equal(set.url, config.url);
      assert.equal(set.id, 'hook');
      let n = await next(1);
      assert.deepEqual(seen(n), { id: taskId, state: mode === 'legacy' ? 'working' : 'TASK_STATE_WORKING' });
      assert.equal(n.headers['x-a2a-notification-token'], 'tok-js');
      assert.equal(n.headers['a2a-notification-token'], 'tok-js');
      assert.equal(n.headers.authorization, 'Bearer secret-js');
      const read = await c.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'hook' });
      assert.equal(read.url, config.url);
      assert.equal(read.token, 'tok-js');
      const list = await c.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' });
      assert.deepEqual(list.configs.map((x) => x.id), ['hook']);
      const bob = await client('bob');
      const notFound = (err) => err.name === 'TaskNotFoundError';
      await assert.rejects(bob.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'hook' }), notFound);
      await assert.rejects(bob.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' }), notFound);
      await assert.rejects(bob.createTaskPushNotificationConfig({ ...config, url: config.url + '/bob' }), notFound);
      await assert.rejects(bob.deleteTaskPushNotificationConfig({ tenant: '', taskId, id: 'hook' }), notFound);
      const released = await fetch(`${base}/test/release?key=${key}3`, { method: 'POST' });
      assert.equal(released.status, 200);
      n = await next(2);
      assert.deepEqual(seen(n), { id: taskId, state: mode === 'legacy' ? 'completed' : 'TASK_STATE_COMPLETED' });
      assert.equal(last(await collect(stream)).value.status.state, TaskState.TASK_STATE_COMPLETED);
      await c.deleteTaskPushNotificationConfig({ tenant: '', taskId, id: 'hook' });
      assert.deepEqual((await c.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' })).configs, []);
    } finally {
      receiver.close();
    }
  },

  // ListTasks (1.0 only): the user's tasks, the latest first, never
  // another user's.
  async listTasks() {
    const user = `lister-${mode}`;
    const c = await client(user);
    if (mode === 'legacy') {
      await assert.rejects(c.listTasks(listRequest()), /not found|no equivalent/i);
      return;
    }
    const first = await c.sendMessage(text('hi'));
    const second = await c.sendMessage(text('email eve'));
    const list = await c.listTasks(listRequest());
    assert.deepEqual(list.tasks.map((t) => t.id), [second.id, first.id]);
    const waiting = await c.listTasks(listRequest({ status: TaskState.TASK_STATE_INPUT_REQUIRED }));
    assert.deepEqual(waiting.tasks.map((t) => t.id), [second.id]);
    const page = await c.listTasks(listRequest({ pageSize: 1 }));
    assert.deepEqual(page.tasks.map((t) => t.id), [second.id]);
    const next = await c.listTasks(listRequest({ pageSize: 1, pageToken: page.nextPageToken }));
    assert.deepEqual(next.tasks.map((t) => t.id), [first.id]);
    const other = await client(`other-${mode}`);
    assert.deepEqual((await other.listTasks(listRequest())).tasks, []);
  },

  // Bad requests, as the binding answers them.
  async badRequests() {
    const c = await client('alice');
    await assert.rejects(c.getTask({ id: 'no-such-task' }), (err) => err.name === 'TaskNotFoundError');
    const post = async (path, body, type = 'application/json') => {
      const res = await fetch(base + path, { method: 'POST', headers: { 'Content-Type': type, Authorization: 'Bearer alice' }, body });
      return { status: res.status, body: await res.json() };
    };
    if (mode === 'rest') {
      let r = await post(`${endpoint}/message:send`, '{nope');
      assert.equal(r.status, 400);
      assert.equal(r.body.error.status, 'INVALID_ARGUMENT');
      r = await post(`${endpoint}/message:send`, '{}', 'text/plain');
      assert.equal(r.status, 415);
      return;
    }
    let r = await post(endpoint, '{nope');
    assert.equal(r.body.error.code, -32700);
    r = await post(endpoint, JSON.stringify({ jsonrpc: '2.0', id: 1, method: mode === 'legacy' ? 'GetTask' : 'tasks/get', params: { id: 'x' } }));
    assert.equal(r.body.error.code, -32601);
  },

  // Every request went to the mode's endpoint.
  async endpoints() {
    const used = [...paths].filter((p) => !p.endsWith('/.well-known/agent-card.json'));
    assert.ok(used.length > 0);
    for (const p of used) assert.ok(mode === 'rest' ? p.startsWith(endpoint + '/') : p === endpoint, `${p} is not ${endpoint}`);
  },
};

await runScenarios(scenarios);

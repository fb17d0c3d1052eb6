// The AI SDK's own client code against our aisdk handler: AbstractChat
// (what useChat runs), DefaultChatTransport (uiMessageChunkSchema on every
// chunk), readUIMessageStream and validateUIMessages. CHAT_URL is the
// handler's URL. The Go test (agentserver/aisdk) scripts the model:
// get_weather answers for a city, needs approval for Oslo, get_location is
// a browser tool, and "fail" makes the model fail.
import assert from 'node:assert/strict';
import { runScenarios } from './scenarios.mjs';
import {
  AbstractChat, DefaultChatTransport, readUIMessageStream, validateUIMessages, uiMessageChunkSchema,
  lastAssistantMessageIsCompleteWithApprovalResponses, lastAssistantMessageIsCompleteWithToolCalls,
} from 'ai';

const url = process.env.CHAT_URL;
if (!url) throw new Error('CHAT_URL is not set');

// The state useChat keeps, without React.
class State {
  constructor(messages = []) { this.status = 'ready'; this.error = undefined; this.messages = messages; }
  pushMessage(m) { this.messages = this.messages.concat(m); }
  popMessage() { this.messages = this.messages.slice(0, -1); }
  replaceMessage(i, m) { this.messages = [...this.messages.slice(0, i), m, ...this.messages.slice(i + 1)]; }
  snapshot(v) { return structuredClone(v); }
}

class Chat extends AbstractChat {
  constructor({ messages, ...init }) { super({ ...init, state: new State(messages) }); }
}

// settle waits until the chat is done with every request it makes by
// itself (sendAutomaticallyWhen).
async function settle(chat) {
  for (let i = 0; i < 2000 && (chat.status === 'submitted' || chat.status === 'streaming'); i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => setTimeout(r, 20));
  for (let i = 0; i < 2000 && (chat.status === 'submitted' || chat.status === 'streaming'); i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
}

function ok(chat) {
  assert.equal(chat.error, undefined, `the chat failed: ${chat.error}`);
  assert.equal(chat.status, 'ready');
}

const toolParts = (m, name) => m.parts.filter((p) => p.type === `tool-${name}`);
const text = (m) => m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
const last = (chat) => chat.messages.at(-1);

async function valid(chat) {
  // validateUIMessages throws on a message the SDK would not take back.
  await validateUIMessages({ messages: chat.messages });
}

const scenarios = {
  // Text and two parallel tool calls, as useChat sees them.
  async run() {
    const chat = new Chat({ id: 'js-run', transport: new DefaultChatTransport({ api: url }) });
    await chat.sendMessage({ text: 'What is the weather in Paris and Tokyo?' });
    await settle(chat);
    ok(chat);
    assert.equal(chat.messages.length, 2);
    const a = last(chat);
    assert.equal(a.role, 'assistant');
    assert.match(a.id, /^msg_run_/);
    const calls = toolParts(a, 'get_weather');
    assert.equal(calls.length, 2);
    for (const c of calls) assert.equal(c.state, 'output-available', JSON.stringify(c));
    assert.deepEqual(calls.map((c) => c.input.city).sort(), ['Paris', 'Tokyo']);
    assert.match(text(a), /Paris: sunny/);
    assert.ok(a.parts.some((p) => p.type === 'step-start'));
    assert.ok(a.metadata.usage.totalTokens > 0, JSON.stringify(a.metadata));
    await valid(chat);

    // The next message continues the thread on the server.
    await chat.sendMessage({ text: 'And in Oslo tomorrow? fine, just answer' });
    await settle(chat);
    ok(chat);
    assert.equal(chat.messages.length, 4);
  },

  // A running call's progress: transient data-tool-progress parts, which
  // the chat hands to onData (each chunk passes uiMessageChunkSchema) and
  // keeps in no message; the last before the call's output is its last
  // report.
  async progress() {
    const seen = [];
    const chat = new Chat({
      id: 'js-progress', transport: new DefaultChatTransport({ api: url }),
      onData: (part) => { seen.push({ part, output: toolParts(last(chat), 'get_weather')[0]?.state }); },
    });
    await chat.sendMessage({ text: 'What is the weather in Bergen?' });
    await settle(chat);
    ok(chat);
    const a = last(chat);
    const [call] = toolParts(a, 'get_weather');
    assert.equal(call.state, 'output-available');
    assert.ok(seen.length > 0, 'onData saw no progress');
    for (const { part, output } of seen) {
      assert.equal(part.type, 'data-tool-progress');
      assert.equal(part.id, call.toolCallId);
      assert.notEqual(output, 'output-available', 'progress after the output');
    }
    assert.deepEqual(seen.at(-1).part.data, { toolCallId: call.toolCallId, done: 3, total: 3, message: 'station 3 of 3' });
    assert.ok(!a.parts.some((p) => p.type.startsWith('data-')), 'a transient part was kept: ' + JSON.stringify(a.parts));
    assert.match(text(a), /Bergen: sunny/);
    await valid(chat);
  },

  // Every chunk of a raw response through the SDK's own schema and
  // stream reader, then validateUIMessages on the message it rebuilds.
  async raw() {
    const messages = [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'What is the weather in Paris?' }] }];
    const res = await fetch(url, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'js-raw', messages, trigger: 'submit-message' }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const body = await res.text();
    assert.ok(!body.includes('\r'), 'CR in the stream');
    const frames = body.split('\n\n').filter(Boolean);
    assert.equal(frames.at(-1), 'data: [DONE]');
    const schema = uiMessageChunkSchema();
    for (const f of frames.slice(0, -1)) {
      assert.ok(f.startsWith('data: '), f);
      const r = await schema.validate(JSON.parse(f.slice(6)));
      assert.ok(r.success, `chunk ${f} fails uiMessageChunkSchema: ${r.error}`);
    }
    const stream = new DefaultChatTransport({ api: url }).processResponseStream(new Response(body).body);
    let message;
    for await (message of readUIMessageStream({ stream, terminateOnError: true }));
    assert.equal(message.role, 'assistant');
    assert.match(text(message), /Paris: sunny/);
    await validateUIMessages({ messages: [...messages, message] });
  },

  // An approval round trip through the chat's own API.
  async approval() {
    const chat = new Chat({
      id: 'js-approval', transport: new DefaultChatTransport({ api: url }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await chat.sendMessage({ text: 'What is the weather in Oslo and Paris?' });
    await settle(chat);
    ok(chat);
    let [oslo] = toolParts(last(chat), 'get_weather').filter((p) => p.input.city === 'Oslo');
    assert.equal(oslo.state, 'approval-requested', JSON.stringify(last(chat).parts));
    // Paris needs no approval, but its result waits for the turn's
    // decisions.
    await chat.addToolApprovalResponse({ id: oslo.approval.id, approved: true });
    await settle(chat);
    ok(chat);
    assert.equal(chat.messages.length, 2, 'the continuation is the same assistant message');
    const calls = toolParts(last(chat), 'get_weather');
    for (const c of calls) assert.equal(c.state, 'output-available', JSON.stringify(last(chat).parts, null, 1));
    assert.match(text(last(chat)), /Oslo: sunny/);
    await valid(chat);

    // A denial: the model reads the reason.
    await chat.sendMessage({ text: 'Now only Oslo' });
    await settle(chat);
    [oslo] = toolParts(last(chat), 'get_weather');
    assert.equal(oslo.state, 'approval-requested');
    await chat.addToolApprovalResponse({ id: oslo.approval.id, approved: false, reason: 'not today' });
    await settle(chat);
    ok(chat);
    [oslo] = toolParts(last(chat), 'get_weather');
    assert.equal(oslo.state, 'output-denied', JSON.stringify(oslo));
    assert.match(text(last(chat)), /denied: not today/);
    await valid(chat);
  },

  // A browser tool: onToolCall answers it with addToolOutput, and the
  // chat sends the result by itself.
  async browserTool() {
    let chat;
    chat = new Chat({
      id: 'js-browser',
      transport: new DefaultChatTransport({ api: url, body: { tools: [
        { name: 'get_location', description: 'Where the user is', inputSchema: { type: 'object', properties: {} } },
      ] } }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
      onToolCall: async ({ toolCall }) => {
        if (toolCall.toolName === 'get_location') {
          chat.addToolOutput({ tool: 'get_location', toolCallId: toolCall.toolCallId, output: { city: 'Lyon' } });
        }
      },
    });
    await chat.sendMessage({ text: 'What is the weather where I am?' });
    await settle(chat);
    ok(chat);
    assert.equal(chat.messages.length, 2);
    const a = last(chat);
    assert.equal(toolParts(a, 'get_location')[0].state, 'output-available');
    assert.equal(toolParts(a, 'get_weather')[0].input.city, 'Lyon');
    assert.match(text(a), /Lyon: sunny/);
    await valid(chat);
  },

  // A reload while the run waits for an approval: a new chat with the
  // same id resumes the run from its start, and finishes it.
  async resume() {
    const first = new Chat({ id: 'js-resume', transport: new DefaultChatTransport({ api: url }) });
    await first.sendMessage({ text: 'What is the weather in Oslo?' });
    await settle(first);
    ok(first);
    const user = first.messages[0];

    const reloaded = new Chat({
      id: 'js-resume', messages: [user], transport: new DefaultChatTransport({ api: url }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await reloaded.resumeStream();
    await settle(reloaded);
    ok(reloaded);
    assert.equal(reloaded.messages.length, 2);
    assert.equal(last(reloaded).id, last(first).id, 'the resumed message is the run');
    const [oslo] = toolParts(last(reloaded), 'get_weather');
    assert.equal(oslo.state, 'approval-requested');
    await reloaded.addToolApprovalResponse({ id: oslo.approval.id, approved: true });
    await settle(reloaded);
    ok(reloaded);
    assert.match(text(last(reloaded)), /Oslo: sunny/);
    await valid(reloaded);

    // Nothing runs any more: the resume is a no-op (204).
    const count = reloaded.messages.length;
    await reloaded.resumeStream();
    await settle(reloaded);
    ok(reloaded);
    assert.equal(reloaded.messages.length, count);
  },

  // The stop button: DELETE on the stream's route stops the run while its
  // call runs; the chat's own stream ends with the call's part answered
  // (output-error), and the next message is taken at once.
  async stop() {
    const chat = new Chat({ id: 'js-stop', transport: new DefaultChatTransport({ api: url }) });
    const sent = chat.sendMessage({ text: 'What is the weather at the Gate?' });
    for (let i = 0; i < 2000 && !(last(chat)?.role === 'assistant' && toolParts(last(chat), 'get_weather').length); i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    const res = await fetch(`${url}/js-stop/stream`, { method: 'DELETE' });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).state, 'cancelled');
    await sent;
    await settle(chat);
    assert.equal(chat.error, undefined, `the chat failed: ${chat.error}`);
    assert.equal(chat.status, 'ready');
    const [call] = toolParts(last(chat), 'get_weather');
    assert.equal(call.state, 'output-error', JSON.stringify(call));
    await valid(chat);
    await chat.sendMessage({ text: 'What is the weather in Paris?' });
    await settle(chat);
    ok(chat);
    assert.equal(chat.messages.length, 4);
    assert.match(text(last(chat)), /Paris: sunny/);
  },

  // A failure reaches the chat as the server's safe message.
  async failure() {
    const chat = new Chat({ id: 'js-fail', transport: new DefaultChatTransport({ api: url }) });
    await chat.sendMessage({ text: 'please fail' });
    await settle(chat);
    assert.equal(chat.status, 'error');
    assert.equal(chat.error.message, 'the server could not authenticate with the model');
  },

  // regenerate is refused clearly: the thread only grows.
  async regenerate() {
    const chat = new Chat({ id: 'js-regen', transport: new DefaultChatTransport({ api: url }) });
    await chat.sendMessage({ text: 'What is the weather in Paris?' });
    await settle(chat);
    ok(chat);
    await chat.regenerate();
    await settle(chat);
    assert.equal(chat.status, 'error');
    assert.match(chat.error.message, /regenerate-message is not supported/);
  },

  // After the others: each chat's stored messages (GET {id}/messages),
  // as useChat's initial messages take them, pass validateUIMessages; a
  // chat loaded from them goes on.
  async history() {
    for (const id of ['js-run', 'js-progress', 'js-approval', 'js-browser', 'js-resume', 'js-stop']) {
      const res = await fetch(`${url}/${id}/messages`);
      assert.equal(res.status, 200);
      const messages = await res.json();
      assert.ok(messages.length >= 2, `${id}: ${JSON.stringify(messages)}`);
      messages.forEach((m, i) => assert.equal(m.role, i % 2 ? 'assistant' : 'user', `${id}: ${JSON.stringify(messages)}`));
      await validateUIMessages({ messages });
    }
    const messages = await (await fetch(`${url}/js-approval/messages`)).json();
    const weather = messages.flatMap((m) => toolParts(m, 'get_weather'));
    const oslo = weather.filter((p) => p.input.city === 'Oslo');
    assert.equal(oslo[0].state, 'output-available');
    assert.deepEqual(oslo[0].approval, { id: oslo[0].toolCallId, approved: true });
    assert.equal(oslo[1].state, 'output-denied', `the denial: ${JSON.stringify(oslo[1])}`);
    assert.deepEqual(oslo[1].approval, { id: oslo[1].toolCallId, approved: false, reason: 'not today' });
    const [stopped] = (await (await fetch(`${url}/js-stop/messages`)).json()).flatMap((m) => toolParts(m, 'get_weather'));
    assert.equal(stopped.state, 'output-error');

    const chat = new Chat({ id: 'js-approval', messages, transport: new DefaultChatTransport({ api: url }) });
    await chat.sendMessage({ text: 'What is the weather in Paris?' });
    await settle(chat);
    ok(chat);
    assert.equal(chat.messages.length, messages.length + 2);
    assert.match(text(last(chat)), /Paris: sunny/);
    await valid(chat);
  },

  // Files (run by TestOfficialClientFiles, on a server that keeps them):
  // a tool's chart and CSV come as file parts whose URLs download them;
  // a user's upload is kept, and the stored messages link it.
  async 'only:files'() {
    const origin = new URL(url).origin;
    const chat = new Chat({ id: 'js-files', transport: new DefaultChatTransport({ api: url }) });
    await chat.sendMessage({ text: 'Draw a chart of the weather' });
    await settle(chat);
    ok(chat);
    const files = last(chat).parts.filter((p) => p.type === 'file');
    assert.deepEqual(files.map((f) => f.mediaType).sort(), ['image/png', 'text/csv'], JSON.stringify(last(chat)));
    for (const f of files) {
      const res = await fetch(origin + f.url);
      assert.equal(res.status, 200, f.url);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      const body = new Uint8Array(await res.arrayBuffer());
      if (f.mediaType === 'image/png') {
        assert.equal(res.headers.get('content-type'), 'image/png');
        assert.deepEqual([...body.slice(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      } else {
        assert.match(new TextDecoder().decode(body), /^city,temperature\n/);
      }
    }
    await valid(chat);

    const note = 'data:text/plain;base64,' + Buffer.from('remember the milk').toString('base64');
    await chat.sendMessage({ text: 'What is in this file?', files: [{ type: 'file', mediaType: 'text/plain', filename: 'note.txt', url: note }] });
    await settle(chat);
    ok(chat);
    const messages = await (await fetch(`${url}/js-files/messages`)).json();
    const upload = messages.flatMap((m) => m.parts).find((p) => p.type === 'file' && p.filename === 'note.txt');
    assert.ok(upload && upload.url.startsWith('/artifacts/js-files/note.txt'), JSON.stringify(messages));
    assert.equal(await (await fetch(origin + upload.url)).text(), 'remember the milk');
    assert.ok(messages.flatMap((m) => m.parts).some((p) => p.type === 'file' && p.url === '/artifacts/js-files/chart.png?version=1'));
    await validateUIMessages({ messages });
  },
};

await runScenarios(scenarios);

import { useEffect, useReducer, useRef, useState } from 'react';
import { HttpAgent, runHttpRequest, transformHttpEventStream } from '@ag-ui/client';
import Composer from './Composer.jsx';
import Files from './Files.jsx';
import Tool from './Tool.jsx';
import { api, threadId } from './config.js';

const url = `${api}/agui`;

// Agent is HttpAgent with a connect: HttpAgent has none of its own. POST
// /agui/connect streams the thread's run in progress from its start (the
// calls it waits for included), or an empty run.
class Agent extends HttpAgent {
  connect(input) {
    return transformHttpEventStream(runHttpRequest(() => this.fetch(`${this.url}/connect`, this.requestInit(input))));
  }
}

// AGUIPage loads the thread's stored messages (GET /agui/messages, a
// MESSAGES_SNAPSHOT), then shows the chat and reconnects to a run in
// progress.
export default function AGUIPage() {
  const [agent, setAgent] = useState();
  const [failure, setFailure] = useState();
  useEffect(() => {
    fetch(`${url}/messages?threadId=${encodeURIComponent(threadId)}`)
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`loading the thread: HTTP ${r.status}`))))
      .then((snapshot) => setAgent(new Agent({ url, threadId, initialMessages: snapshot.messages })), setFailure);
  }, []);
  if (failure) return <p className="failure">{failure.message} (is the server at {api} running, with -cors for this page?)</p>;
  if (!agent) return <p className="loading">Loading the thread…</p>;
  return <Chat agent={agent} />;
}

function Chat({ agent }) {
  const [, render] = useReducer((n) => n + 1, 0);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState();
  const decisions = useRef({}); // interrupt id → resume entry, until all are decided
  useEffect(() => {
    const sub = agent.subscribe({ onMessagesChanged: render, onRunFinalized: render });
    return () => sub.unsubscribe();
  }, [agent]);

  // run runs the agent, one AG-UI run: connect, a new message, or decisions.
  const run = async (start) => {
    setBusy(true);
    setFailure(undefined);
    try {
      await start();
    } catch (e) {
      setFailure(e);
    } finally {
      setBusy(false);
      render();
    }
  };
  useEffect(() => {
    run(() => agent.connectAgent({ runId: crypto.randomUUID() }));
  }, [agent]);

  const send = (text) => {
    agent.addMessage({ id: crypto.randomUUID(), role: 'user', content: text });
    run(() => agent.runAgent({ runId: crypto.randomUUID() }));
  };
  // The stop route cancels the run (abortRun only drops the connection).
  const stop = () =>
    fetch(`${url}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ threadId }) });
  // A decision waits for the others: the run resumes once every call that
  // waits is decided, as the client requires.
  const decide = (interrupt, approved) => {
    decisions.current[interrupt.id] = { interruptId: interrupt.id, status: 'resolved', payload: { approved } };
    render();
    const pending = agent.pendingInterrupts;
    if (pending.every((i) => decisions.current[i.id])) {
      const resume = pending.map((i) => decisions.current[i.id]);
      decisions.current = {};
      run(() => agent.runAgent({ runId: crypto.randomUUID(), resume }));
    }
  };

  const results = {}, progress = {};
  for (const m of agent.messages) {
    if (m.role === 'tool') results[m.toolCallId] = m;
    if (m.role === 'activity' && m.activityType === 'tool-progress') progress[m.content.toolCallId] = m.content;
  }
  const state = (call) => {
    const result = results[call.id];
    const interrupt = agent.pendingInterrupts.find((i) => i.toolCallId === call.id);
    if (result) return result.metadata?.denied ? 'output-denied' : result.error || result.metadata?.isError ? 'output-error' : 'output-available';
    if (interrupt) return decisions.current[interrupt.id] ? 'approval-responded' : 'approval-requested';
    return 'input-available';
  };
  return (
    <>
      <section className="messages" aria-live="polite">
        {agent.messages
          .filter((m) => m.role === 'user' || m.role === 'assistant')
          .map((m) => (
            <article key={m.id} className={`message ${m.role}`} data-role={m.role}>
              {typeof m.content === 'string' && m.content && <p className="text">{m.content}</p>}
              {(m.toolCalls ?? []).map((call) => {
                const interrupt = agent.pendingInterrupts.find((i) => i.toolCallId === call.id);
                const result = results[call.id];
                return (
                  <Tool
                    key={call.id}
                    id={call.id}
                    name={call.function.name}
                    input={parse(call.function.arguments)}
                    state={state(call)}
                    output={result && !result.error ? parse(textOf(result.content)) : undefined}
                    error={result?.error}
                    progress={progress[call.id]}
                    onDecide={interrupt && ((approved) => decide(interrupt, approved))}
                  />
                );
              })}
              {/* The files the calls made: media parts of their results, with url sources. */}
              <Files files={(m.toolCalls ?? []).flatMap((call) => mediaOf(results[call.id]?.content))} />
            </article>
          ))}
        {failure && <p className="failure">{failure.message}</p>}
      </section>
      <Composer busy={busy} onSend={send} onStop={stop} />
    </>
  );
}

function parse(json) {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

// textOf is a tool result's text: its content, or the text parts of a
// content that has parts (a result that made files).
function textOf(content) {
  return Array.isArray(content) ? content.filter((p) => p.type === 'text').map((p) => p.text).join('') : content;
}

// mediaOf returns the files of a tool result's content: its media parts
// whose source is a URL.
function mediaOf(content) {
  if (!Array.isArray(content)) return [];
  return content
    .filter((p) => p.type !== 'text' && p.source?.type === 'url')
    .map((p) => ({ name: p.metadata?.filename ?? p.source.value, mediaType: p.source.mimeType, url: p.source.value }));
}

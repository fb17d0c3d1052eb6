import { useEffect, useState } from 'react';
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import Composer from './Composer.jsx';
import Files, { fileName } from './Files.jsx';
import Tool from './Tool.jsx';
import { api, threadId } from './config.js';

const chatURL = `${api}/api/chat`;
const threadURL = `${chatURL}/${encodeURIComponent(threadId)}`;

// AISDKPage loads the thread's stored messages (GET /api/chat/{id}/messages),
// then shows the chat: useChat needs them when it starts.
export default function AISDKPage() {
  const [initial, setInitial] = useState();
  const [failure, setFailure] = useState();
  useEffect(() => {
    fetch(`${threadURL}/messages`)
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`loading the chat: HTTP ${r.status}`))))
      .then(setInitial, setFailure);
  }, []);
  if (failure) return <p className="failure">{failure.message} (is the server at {api} running, with -cors for this page?)</p>;
  if (!initial) return <p className="loading">Loading the chat…</p>;
  return <Chat initial={initial} />;
}

function Chat({ initial }) {
  // Progress is transient (data-tool-progress parts are in no message):
  // keep each call's last report.
  const [progress, setProgress] = useState({});
  const { messages, sendMessage, status, error, addToolApprovalResponse } = useChat({
    id: threadId,
    messages: initial,
    // A run in progress when the page loads (a reload mid-run) streams again
    // from its start: GET /api/chat/{id}/stream.
    resume: true,
    transport: new DefaultChatTransport({ api: chatURL }),
    // Once every call that waits is approved or denied, send the decisions.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onData: (part) => {
      if (part.type === 'data-tool-progress') setProgress((p) => ({ ...p, [part.data.toolCallId]: part.data }));
    },
  });
  const busy = status === 'submitted' || status === 'streaming';
  // useChat's stop() only drops the connection, and the server runs on: the
  // stop route cancels the run, and the stream ends by itself.
  const stop = () => fetch(`${threadURL}/stream`, { method: 'DELETE' });
  return (
    <>
      <section className="messages" aria-live="polite">
        {messages.map((m) => (
          <article key={m.id} className={`message ${m.role}`} data-role={m.role}>
            {m.parts.map((part, i) => {
              if (part.type === 'text') return <p key={i} className="text">{part.text}</p>;
              if (part.type === 'reasoning') return <p key={i} className="reasoning">{part.text}</p>;
              if (part.type === 'dynamic-tool' || part.type.startsWith('tool-')) {
                return (
                  <Tool
                    key={part.toolCallId}
                    id={part.toolCallId}
                    name={part.toolName ?? part.type.slice('tool-'.length)}
                    input={part.input}
                    state={part.state === 'approval-responded' && !part.approval?.approved ? 'output-denied' : part.state}
                    output={part.output}
                    error={part.errorText}
                    progress={progress[part.toolCallId]}
                    onDecide={(approved) => addToolApprovalResponse({ id: part.approval.id, approved })}
                  />
                );
              }
              return null;
            })}
            {/* The files of the message: a chart a tool made, a file the user sent. */}
            <Files files={m.parts.filter((p) => p.type === 'file').map((p) => ({
              name: p.providerMetadata?.toolnexus?.name ?? p.filename ?? fileName(p.url), mediaType: p.mediaType, url: p.url,
            }))} />
          </article>
        ))}
        {status === 'submitted' && <p className="thinking">Thinking…</p>}
        {error && <p className="failure">{error.message}</p>}
      </section>
      <Composer busy={busy} onSend={(text) => sendMessage({ text })} onStop={stop} />
    </>
  );
}

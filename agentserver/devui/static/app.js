// The toolnexus development UI: a chat over the server's AI SDK UI message
// stream (api/chat), and views of the runs, conversations and agent over
// the dev UI's JSON API. Plain JavaScript, no dependencies, no build step.
'use strict';

const state = {
  info: null,
  thread: '',
  stream: null, // the AbortController of the chat stream being read
  current: null, // the assistant message being streamed
  runPoll: 0,
  selectedRun: '',
  selectedSpan: -1,
  runs: [], // the runs listed last
  runFilter: { q: '', state: '', tool: '' }, // kept in the address: #runs/<run>?q=…&state=…&tool=…
};

// ---- small helpers ----

function $(id) { return document.getElementById(id); }

// el makes an element: el('div', {class: 'x', onclick: f}, child, 'text').
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else if (k === 'style') Object.assign(e.style, v); // CSSOM: the page's CSP allows no style attribute
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// fill replaces parent's children with children, skipping the absent
// ones (null, undefined, false), as el does: replaceChildren would write
// them as text.
function fill(parent, ...children) {
  parent.replaceChildren(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
}

// stateLabel says where a run stands, in words: a run that waits for a
// decision says what it waits for.
function stateLabel(state, waitingFor) {
  if (state !== 'waiting') return state;
  return waitingFor === 'browser' ? 'waiting for a browser tool' : waitingFor === 'approval' ? 'waiting for approval' : 'waiting for a decision';
}

function newID(prefix) {
  const b = new Uint8Array(9);
  crypto.getRandomValues(b);
  return prefix + Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

function pretty(v) {
  if (typeof v === 'string') {
    try { return JSON.stringify(JSON.parse(v), null, 2); } catch { return v; }
  }
  return JSON.stringify(v, null, 2);
}

// short shows a value in a <pre class="json cls">: on one line when it
// is short, else as a tree (jsonView).
function short(v, cls) {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s !== undefined && s.length <= 240 ? el('pre', { class: 'json ' + cls }, s) : jsonView(v, { class: cls });
}

// foldOver is the size (of its JSON on one line, in characters) past
// which an object or array is folded when first shown.
const foldOver = 400;

// jsonView is a <pre class="json"> (with attrs) showing v, or the JSON
// in a string, as a tree: each object and array of it has a button, its
// opening bracket, that folds and unfolds it (a mouse click, or Enter or
// Space on the focused bracket); one larger than foldOver is folded at
// first, but the outermost. Its text is pretty(v) whatever is folded, so
// copying it copies the whole JSON.
function jsonView(v, attrs) {
  const pre = el('pre', Object.assign({}, attrs, { class: 'json' + (attrs && attrs.class ? ' ' + attrs.class : '') }));
  return fillJSON(pre, v);
}

// fillJSON replaces pre's children with the tree of v (see jsonView).
function fillJSON(pre, v) {
  if (typeof v === 'string') {
    try { v = JSON.parse(v); } catch { fill(pre, v); return pre; }
  }
  if (v === undefined) { fill(pre, ''); return pre; }
  fill(pre, jsonTree(v, '', true));
  return pre;
}

function jsonTree(v, indent, open) {
  if (typeof v !== 'object' || v === null) return document.createTextNode(JSON.stringify(v));
  const isArray = Array.isArray(v);
  const keys = isArray ? v.map((_, i) => i) : Object.keys(v);
  const [l, r] = isArray ? ['[', ']'] : ['{', '}'];
  if (keys.length === 0) return document.createTextNode(l + r);
  const size = JSON.stringify(v).length;
  if (open === undefined) open = size <= foldOver;
  const inner = indent + '  ';
  const body = el('span', { class: 'jt-body', hidden: !open },
    keys.flatMap((k, i) => [
      '\n' + inner + (isArray ? '' : JSON.stringify(k) + ': '),
      jsonTree(v[k], inner),
      i < keys.length - 1 ? ',' : '',
    ]), '\n' + indent);
  const more = `${keys.length} ${isArray ? (keys.length === 1 ? 'item' : 'items') : (keys.length === 1 ? 'key' : 'keys')}, ${fmtNum(size)} chars`;
  const tog = el('button', {
    type: 'button', class: 'jt-tog', 'aria-expanded': String(open), 'data-more': ` … ${more} `,
    title: (open ? 'fold ' : 'unfold ') + more,
  }, l);
  tog.addEventListener('click', () => {
    const unfold = body.hidden;
    body.hidden = !unfold;
    tog.setAttribute('aria-expanded', String(unfold));
    tog.title = (unfold ? 'fold ' : 'unfold ') + more;
  });
  return el('span', { class: 'jt' }, tog, body, r);
}

function fmtMs(ms) {
  if (ms === undefined || ms === null || isNaN(ms)) return '';
  if (ms === 0) return '0';
  if (ms < 1) return ms.toFixed(2) + ' ms';
  if (ms < 1000) return Math.round(ms) + ' ms';
  return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + ' s';
}

function fmtNum(n) { return (n || 0).toLocaleString('en-US'); }

// toast shows msg for a few seconds: a problem, unless kind is 'ok' (a
// success, in green).
function toast(msg, kind) {
  const t = $('toast');
  t.textContent = msg;
  t.dataset.kind = kind || 'problem';
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 6000);
}

// api fetches a JSON route of the dev UI; errors come back as thrown
// Errors with the server's message and the status.
async function api(path, init) {
  const resp = await fetch(path, Object.assign({ headers: { Accept: 'application/json' } }, init));
  if (!resp.ok) throw await responseError(resp);
  return resp.json();
}

async function responseError(resp) {
  let msg = resp.status + ' ' + resp.statusText;
  try {
    const body = await resp.json();
    if (body && body.error) msg = body.error.message + ' (' + body.error.code + ')';
  } catch { /* not JSON */ }
  const err = new Error(msg);
  err.status = resp.status;
  return err;
}

function fail(err) {
  if (err && err.name === 'AbortError') return;
  toast(err && err.message ? err.message : String(err));
}

// ---- routing: #chat/<thread>, #runs/<run>[?q=…&state=…&tool=…], #threads/<thread>, #agent, #evals ----

function route() {
  const raw = location.hash.slice(1);
  const qi = raw.indexOf('?');
  const query = new URLSearchParams(qi >= 0 ? raw.slice(qi + 1) : '');
  const hash = decodeURIComponent(qi >= 0 ? raw.slice(0, qi) : raw);
  const [view, ...rest] = hash.split('/');
  const arg = rest.join('/');
  const views = ['chat', 'runs', 'threads', 'agent', 'evals'];
  const v = views.includes(view) ? view : 'chat';
  for (const name of views) {
    $('view-' + name).hidden = name !== v;
    $('nav-' + name).classList.toggle('active', name === v);
  }
  if (v !== 'runs') stopPolling();
  if (v === 'chat') openChat(arg);
  else if (v === 'runs') showRuns(arg, query);
  else if (v === 'threads') showThreads(arg);
  else if (v === 'evals') showEvals();
  else showAgent();
}

function go(hash) {
  if (location.hash === '#' + hash) route();
  else location.hash = hash;
}

// ---- the chat ----

function chatLink(thread) { return '#chat/' + encodeURIComponent(thread); }

// openChat shows thread (a new one when empty): its stored history, then
// the run in progress, if any, read from its start.
async function openChat(thread) {
  if (!thread) {
    thread = state.thread || (state.info && state.info.thread) || newID('chat-');
    history.replaceState(null, '', chatLink(thread));
  }
  $('nav-chat').href = chatLink(thread);
  if (thread === state.thread && ($('messages').childElementCount > 0 || state.opening === thread)) return;
  state.opening = thread;
  stopStream();
  state.thread = thread;
  $('chat-thread').textContent = thread;
  const box = $('messages');
  box.replaceChildren();
  let data = null;
  try {
    // A thread the server does not know is a new one: empty.
    data = await api('api/threads/' + encodeURIComponent(thread) + '?missing=empty');
  } catch (err) {
    fail(err);
  }
  if (state.opening === thread) state.opening = '';
  if (state.thread !== thread) return;
  if (data) {
    if (data.from > 0) box.append(el('p', { class: 'muted' }, `(${data.from} earlier contents not shown)`));
    renderHistory(box, data.contents);
    if (data.run) {
      if (data.run.message) renderUser(box, textOf(data.run.message));
      resume(thread);
    }
  }
  scrollDown();
}

function stopStream() {
  if (state.stream) state.stream.abort();
  state.stream = null;
  setBusy(false);
}

function setBusy(busy) {
  $('stop').hidden = !busy;
  $('send').disabled = busy;
}

function scrollDown() {
  const box = $('messages');
  box.scrollTop = box.scrollHeight;
}

function renderUser(box, text, files) {
  const msg = el('div', { class: 'msg user' }, el('div', { class: 'bubble' }, text));
  if (files && files.length) msg.prepend(el('div', { class: 'files' }, ...files.map(filePreview)));
  box.append(msg);
}

function textOf(content) {
  return (content.parts || []).filter((p) => p.text && !p.thought).map((p) => p.text).join('');
}

// browserTools are the tools the page declares, as the AI SDK transport
// sends them.
function browserTools() {
  return ((state.info && state.info.browserTools) || []).map((t) => ({
    name: t.name, description: t.description || '', inputSchema: t.parameters || { type: 'object', properties: {} },
  }));
}

function isBrowserTool(name) {
  return ((state.info && state.info.browserTools) || []).some((t) => t.name === name);
}

async function send(text) {
  const box = $('messages');
  const files = await attachments();
  renderUser(box, text, files.map((f) => ({ name: f.filename, mediaType: f.mediaType, url: f.url })));
  const view = new AssistantMessage(box);
  scrollDown();
  await post({ id: state.thread, messages: [{ id: newID('m'), role: 'user', parts: [...files, { type: 'text', text }] }] }, view);
}

// attachments reads the files picked to go with the next message as the
// AI SDK's file parts (data: URLs, with their names), and clears the
// picker: a server that keeps files keeps them as the thread's.
async function attachments() {
  const input = $('attach');
  const picked = Array.from(input.files || []);
  input.value = '';
  $('attached').textContent = '';
  return Promise.all(picked.map((f) => new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve({ type: 'file', mediaType: f.type || 'application/octet-stream', filename: f.name, url: r.result });
    r.onerror = () => reject(r.error);
    r.readAsDataURL(f);
  })));
}

// decide sends the decision about a pending call, or a browser tool's
// result, and reads the run on into the same message.
async function decide(view, part) {
  await post({ id: state.thread, messages: [{ id: newID('m'), role: 'assistant', parts: [part] }] }, view);
}

// post sends a chat request and streams its answer into view.
async function post(body, view) {
  stopStream();
  body.tools = browserTools();
  const ctl = new AbortController();
  state.stream = ctl;
  setBusy(true);
  try {
    const resp = await fetch('api/chat', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal: ctl.signal,
    });
    if (!resp.ok) {
      view.problem((await responseError(resp)).message);
      return;
    }
    await readStream(resp, view, ctl);
  } catch (err) {
    if (err.name !== 'AbortError') view.problem('the stream broke: ' + err.message);
  } finally {
    if (state.stream === ctl) {
      state.stream = null;
      setBusy(false);
    }
  }
}

// resume reads the thread's run in progress from its start.
async function resume(thread) {
  stopStream();
  const ctl = new AbortController();
  state.stream = ctl;
  setBusy(true);
  try {
    const resp = await fetch('api/chat/' + encodeURIComponent(thread) + '/stream', { signal: ctl.signal });
    if (resp.status === 204 || state.thread !== thread) return;
    if (!resp.ok) throw await responseError(resp);
    const view = new AssistantMessage($('messages'));
    await readStream(resp, view, ctl);
  } catch (err) {
    fail(err);
  } finally {
    if (state.stream === ctl) {
      state.stream = null;
      setBusy(false);
    }
  }
}

// readStream reads server-sent events of UI message chunks.
async function readStream(resp, view, ctl) {
  const reader = resp.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      for (const line of frame.split('\n')) {
        if (!line.startsWith('data: ')) continue;
        const data = line.slice(6);
        if (data === '[DONE]') { view.streamEnded(); return; }
        if (ctl.signal.aborted) return;
        view.chunk(JSON.parse(data));
      }
    }
  }
  view.streamEnded();
}

// AssistantMessage renders one run: text as it streams, folded thoughts,
// a card per tool call, retries, the typed answer and the end.
class AssistantMessage {
  constructor(box) {
    this.el = el('div', { class: 'msg assistant running' });
    this.body = el('div', { class: 'body' });
    this.meta = el('div', { class: 'meta' });
    this.el.append(this.meta, this.body);
    box.append(this.el);
    this.parts = new Map(); // text and reasoning parts by id
    this.cards = new Map(); // tool cards by call id
    this.run = '';
    this.ended = false;
    this.refreshing = null;
  }

  chunk(c) {
    switch (c.type) {
      case 'start':
        if (c.messageMetadata && c.messageMetadata.runId && this.run !== c.messageMetadata.runId) {
          this.run = c.messageMetadata.runId;
          this.el.dataset.run = this.run;
          this.meta.replaceChildren(el('span', {}, this.run), el('a', { href: '#runs/' + encodeURIComponent(this.run), class: 'timeline-link' }, 'Timeline'));
        }
        break;
      case 'text-start':
        this.part(c.id, () => el('div', { class: 'text' }));
        break;
      case 'text-delta':
        this.part(c.id, () => el('div', { class: 'text' })).append(c.delta);
        break;
      case 'reasoning-start':
      case 'reasoning-delta': {
        const text = this.part(c.id, () => {
          const t = el('div', { class: 'text' });
          this.body.append(el('details', { class: 'thought' }, el('summary', {}, 'Thoughts'), t));
          return t;
        }, true);
        if (c.delta) text.append(c.delta);
        break;
      }
      case 'tool-input-available':
        this.card(c.toolCallId, c.toolName, c.input);
        break;
      case 'tool-approval-request':
        this.card(c.toolCallId).waitApproval();
        break;
      case 'tool-approval-response': {
        const card = this.cards.get(c.approvalId);
        if (card) card.decided(c.approved, c.reason);
        this.resumeQueued();
        break;
      }
      case 'tool-output-available':
        this.card(c.toolCallId).done(c.output);
        this.refreshSoon();
        break;
      case 'tool-output-error':
        this.card(c.toolCallId).failed(c.errorText);
        this.refreshSoon();
        break;
      case 'tool-output-denied':
        this.card(c.toolCallId).denied();
        this.refreshSoon();
        break;
      case 'file': {
        // A file a call made: shown in its card, previewed.
        const meta = (c.providerMetadata && c.providerMetadata.toolnexus) || {};
        const card = meta.toolCallId && this.cards.get(meta.toolCallId);
        const name = meta.name || decodeURIComponent(c.url.split('?')[0].split('/').pop());
        (card ? card.files : this.body).append(filePreview({ name, mediaType: c.mediaType, url: devURL(c.url) }));
        break;
      }
      case 'data-tool-progress': {
        const card = this.cards.get(c.data.toolCallId);
        if (card) card.progress(c.data);
        break;
      }
      case 'data-retry': {
        const d = c.data;
        this.body.append(el('div', { class: 'retry' },
          `Model call failed (${d.reason}); retrying in ${fmtMs(d.delayMs)} — attempt ${d.attempt + 1} of turn ${d.turn + 1}`));
        break;
      }
      case 'data-output':
        this.body.append(el('div', { class: 'output' }, el('div', { class: 'label' }, 'Typed answer'),
          jsonView(c.data)));
        break;
      case 'error':
        this.body.append(el('div', { class: 'error-line' }, 'Error: ' + c.errorText));
        break;
      case 'abort':
        this.body.append(el('div', { class: 'error-line' }, 'Stopped: ' + (c.reason || 'the run was cancelled')));
        break;
      case 'finish':
        this.finish(c);
        break;
      default:
        break; // start-step, finish-step, text-end, reasoning-end, data parts of later versions
    }
    if (c.type !== 'finish' && c.type !== 'start') scrollDown();
  }

  part(id, make, appended) {
    let p = this.parts.get(id);
    if (!p) {
      p = make();
      if (!appended) this.body.append(p);
      this.parts.set(id, p);
    }
    return p;
  }

  card(id, name, input) {
    let card = this.cards.get(id);
    if (!card) {
      card = new ToolCard(this, id, name || '?', input || {});
      this.cards.set(id, card);
      this.body.append(card.el);
    }
    return card;
  }

  finish(c) {
    if (c.finishReason === 'tool-calls') {
      this.el.classList.add('waiting');
      for (const card of this.cards.values()) {
        if (card.state === 'running' && isBrowserTool(card.name)) card.waitBrowser();
      }
      this.refreshSoon();
      return;
    }
    this.ended = true;
    this.el.classList.remove('running', 'waiting');
    const u = (c.messageMetadata && c.messageMetadata.usage) || {};
    const words = { stop: 'Done', length: 'Cut at the output limit', 'content-filter': 'Blocked', error: 'Failed', other: 'Stopped' };
    this.end = el('div', { class: 'end ' + (c.finishReason === 'stop' ? 'ok' : 'fail'), 'data-finish': c.finishReason },
      `${words[c.finishReason] || c.finishReason} · tokens: ${fmtNum(u.inputTokens)} in (${fmtNum(u.cachedInputTokens)} cached), ` +
      `${fmtNum(u.outputTokens)} out (${fmtNum(u.reasoningTokens)} thinking)`);
    this.body.append(this.end);
    this.refreshSoon();
  }

  streamEnded() {
    for (const card of this.cards.values()) card.streamEnded();
  }

  // othersWaiting counts the calls other than card that wait for a
  // decision (an approval, a browser tool's result).
  othersWaiting(card) {
    return [...this.cards.values()].filter((c) => c !== card && c.state === 'waiting').length;
  }

  // resumeQueued shows the calls approved before the others of their
  // pause as running once no call waits any more: a pause is resolved
  // whole, and its calls run only then.
  resumeQueued() {
    if (this.othersWaiting(null) > 0) return;
    for (const card of this.cards.values()) {
      if (card.state === 'queued') card.set('running', 'running');
    }
  }

  // memories shows, above the answer, the memories the run's searches
  // found (those the model was given before its first call, and those
  // its search tool returned), once.
  memories(tl) {
    const found = new Map();
    for (const s of tl.spans) {
      if (s.kind !== 'memory' || s.name !== 'search' || !s.memory) continue;
      for (const m of s.memory.memories) found.set(m.id, m);
    }
    if (found.size === 0 || this.memoryBox) return;
    this.memoryBox = el('details', { class: 'memories' },
      el('summary', {}, `${found.size} ${found.size === 1 ? 'memory' : 'memories'} used`),
      el('ul', {}, ...[...found.values()].map((m) => el('li', {}, memoryLine(m)))));
    this.el.insertBefore(this.memoryBox, this.body);
  }

  problem(msg) {
    this.el.classList.remove('running');
    this.body.append(el('div', { class: 'error-line' }, msg));
  }

  // refreshSoon reads the run's timeline, for what the stream does not
  // say: each call's duration and whether it ran in parallel.
  refreshSoon() {
    if (!this.run || !state.info || !state.info.recording) return;
    if (this.refreshing) { this.again = true; return; }
    this.refreshing = api('api/runs/' + encodeURIComponent(this.run)).then((tl) => {
      for (const s of tl.spans) {
        const card = s.kind === 'tool' && s.parent === 0 && this.cards.get(s.callId);
        if (card) card.timing(s);
      }
      this.memories(tl);
      if (this.end && tl.done && !this.end.dataset.timed) {
        this.end.dataset.timed = '1';
        this.end.append(` · ${tl.modelCalls} model call${tl.modelCalls === 1 ? '' : 's'}, ${tl.toolCalls} tool call${tl.toolCalls === 1 ? '' : 's'} in ${fmtMs(tl.durationMs)}`);
      } else if (this.end && !tl.done && (this.tries = (this.tries || 0) + 1) < 20) {
        // The recorder reads the run's end a moment after the stream.
        setTimeout(() => this.refreshSoon(), 100 * this.tries);
      }
    }).catch((err) => { if (err.status !== 404) fail(err); }).finally(() => {
      this.refreshing = null;
      if (this.again) { this.again = false; this.refreshSoon(); }
    });
  }
}

// ToolCard shows one tool call: its name, arguments, state, result or
// error, duration and parallelism; buttons for an approval, a form for a
// browser tool.
class ToolCard {
  constructor(msg, id, name, input) {
    this.msg = msg;
    this.id = id;
    this.name = name;
    this.state = 'running';
    this.status = el('span', { class: 'badge status' }, 'running');
    this.dur = el('span', { class: 'badge dur', hidden: true });
    this.par = el('span', { class: 'badge par', hidden: true });
    this.actions = el('div', { class: 'actions', hidden: true });
    this.result = el('div', { class: 'result' });
    this.bar = el('progress', { max: '1' });
    this.note = el('span', { class: 'progress-note' });
    this.prog = el('div', { class: 'progress', hidden: true }, this.bar, this.note);
    this.files = el('div', { class: 'files' });
    this.el = el('div', { class: 'tool', 'data-call-id': id, 'data-name': name, 'data-state': 'running' },
      el('div', { class: 'tool-head' }, el('span', { class: 'tool-name' }, name), this.status, this.dur, this.par),
      this.prog,
      el('div', { class: 'label' }, 'arguments'), el('pre', { class: 'json args' }, JSON.stringify(input)),
      this.actions, this.result, this.files);
  }

  // progress shows the call's latest report (a data-tool-progress part):
  // a bar (moving when the total is unknown), the percentage, the message.
  progress(d) {
    if (this.state !== 'running') return;
    this.prog.hidden = false;
    let pct = '';
    if (d.total > 0) {
      this.bar.max = d.total;
      this.bar.value = Math.min(Math.max(d.done, 0), d.total);
      pct = Math.round(100 * this.bar.value / d.total) + '%';
    } else {
      this.bar.removeAttribute('value');
    }
    this.note.textContent = [pct, d.message || ''].filter(Boolean).join(' ');
  }

  // ended hides the progress of a call that has its answer.
  ended() { this.prog.hidden = true; }

  set(stateName, label, cls) {
    this.state = stateName;
    this.el.dataset.state = stateName;
    this.status.textContent = label;
    this.status.className = 'badge status ' + (cls || '');
  }

  waitApproval() {
    this.set('waiting', 'needs approval', 'wait');
    const approve = el('button', { class: 'primary approve', type: 'button' }, 'Approve');
    const deny = el('button', { class: 'deny', type: 'button' }, 'Deny');
    const reason = el('input', { type: 'text', class: 'reason', placeholder: 'reason (optional)' });
    const answer = (approved) => {
      approve.disabled = deny.disabled = true;
      if (this.onDecide) { this.onDecide(approved); return; } // a voice session's call (voice.js)
      const approval = { id: this.id, approved };
      if (!approved && reason.value) approval.reason = reason.value;
      decide(this.msg, { type: 'tool-' + this.name, toolCallId: this.id, state: 'approval-responded', approval });
    };
    approve.addEventListener('click', () => answer(true));
    deny.addEventListener('click', () => answer(false));
    this.actions.replaceChildren(approve, deny, reason);
    this.actions.hidden = false;
  }

  waitBrowser() {
    this.set('waiting', 'runs in the browser: your answer', 'wait');
    const area = el('textarea', { rows: 3, class: 'browser-result', placeholder: 'the result: JSON, or plain text' });
    const ok = el('button', { class: 'primary send-result', type: 'button' }, 'Send result');
    const bad = el('button', { class: 'send-error', type: 'button' }, 'Send as error');
    const sendIt = (isError) => {
      ok.disabled = bad.disabled = true;
      const part = { type: 'tool-' + this.name, toolCallId: this.id };
      if (isError) Object.assign(part, { state: 'output-error', errorText: area.value || 'the tool failed' });
      else {
        let output = area.value;
        try { output = JSON.parse(area.value); } catch { /* plain text */ }
        Object.assign(part, { state: 'output-available', output });
      }
      decide(this.msg, part);
    };
    ok.addEventListener('click', () => sendIt(false));
    bad.addEventListener('click', () => sendIt(true));
    this.actions.replaceChildren(el('form', { class: 'browser-form', onsubmit: (e) => { e.preventDefault(); sendIt(false); } },
      el('div', { class: 'label' }, 'result of ' + this.name), area, el('div', { class: 'actions' }, ok, bad)));
    this.actions.hidden = false;
  }

  // settled takes away the card's buttons or form: its call is decided,
  // or answered.
  settled() {
    this.actions.replaceChildren();
    this.actions.hidden = true;
  }

  // decided shows the call's decision: an approved call runs once every
  // call of its pause is decided, and waits for the others' decisions
  // until then (state queued).
  decided(approved, reason) {
    this.settled();
    if (!approved) {
      this.denied(reason);
      return;
    }
    const others = this.msg.othersWaiting ? this.msg.othersWaiting(this) : 0;
    if (others > 0) this.set('queued', `approved, waiting for the other decision${others === 1 ? '' : 's'}`, 'wait');
    else this.set('running', 'approved, running');
  }

  done(output) {
    this.ended();
    this.settled();
    this.set('done', 'done');
    this.result.replaceChildren(el('div', { class: 'label' }, 'result'), short(output, 'output'));
  }

  failed(text) {
    this.ended();
    this.settled();
    this.set('error', 'error', 'bad');
    this.result.replaceChildren(el('div', { class: 'label' }, 'error'), el('pre', { class: 'json error' }, text));
  }

  // denied shows a call that was denied rather than run; the reason, when
  // known, stays when the stream's tool-output-denied (which has none)
  // follows the decision.
  denied(reason) {
    this.ended();
    this.settled();
    if (this.state !== 'denied' || reason) this.set('denied', 'denied' + (reason ? ': ' + reason : ''), 'bad');
  }

  streamEnded() {
    if (this.state === 'running' && !this.msg.ended && this.msg.el.classList.contains('waiting') === false) {
      this.set('running', 'running');
    }
  }

  timing(s) {
    if (s.end !== undefined && s.runStart !== undefined) {
      this.dur.textContent = fmtMs(s.end - s.runStart);
      this.dur.hidden = false;
    }
    if (s.wait && s.wait.to !== undefined) {
      this.dur.textContent = (this.dur.hidden ? '' : this.dur.textContent + ' · ') + 'waited ' + waitedText(s.wait);
      this.dur.hidden = false;
    }
    this.el.dataset.parallel = String(s.parallel);
    if (s.parallel > 0) {
      this.par.textContent = `parallel with ${s.parallel} other${s.parallel === 1 ? '' : 's'}`;
      this.par.hidden = false;
    }
  }
}

// renderHistory renders stored contents as the chat shows them: the
// user's messages, and each run's answer with its tool calls and results.
// A call denied rather than run is answered {error, denied: true}.
function renderHistory(box, contents) {
  let view = null;
  for (const c of contents) {
    const parts = c.parts || [];
    const responses = parts.filter((p) => p.functionResponse);
    if (c.role === 'user' && responses.length === 0) {
      const text = textOf(c);
      const files = parts.map((p) => p.fileData && historyFile(p.fileData)).filter(Boolean);
      if (text || files.length) renderUser(box, text, files);
      view = null;
      continue;
    }
    if (!view) {
      view = new AssistantMessage(box);
      view.el.classList.remove('running');
      view.ended = true;
      view.calls = [];
    }
    if (responses.length > 0) {
      responses.forEach((p, i) => {
        const r = p.functionResponse;
        const card = (r.id && view.cards.get(r.id)) || view.calls[i];
        if (!card) return;
        const resp = r.response || {};
        const text = 'error' in resp && (typeof resp.error === 'string' ? resp.error : pretty(resp.error));
        if (text !== false && resp.denied === true) card.denied(text);
        else if (text !== false) card.failed(text);
        else card.done('result' in resp ? resp.result : resp);
        for (const rp of r.parts || []) {
          const f = rp.fileData && historyFile(rp.fileData);
          if (f) card.files.append(filePreview(f));
        }
      });
      view.calls = [];
      continue;
    }
    parts.forEach((p, i) => {
      if (p.functionCall) {
        const id = p.functionCall.id || 'h' + Math.random();
        const card = view.card(id, p.functionCall.name, p.functionCall.args || {});
        card.set('done', 'no answer stored');
        view.calls.push(card);
      } else if (p.thought && p.text) {
        view.chunk({ type: 'reasoning-delta', id: 'h' + box.childElementCount + '-' + i + Math.random(), delta: p.text });
      } else if (p.text) {
        view.chunk({ type: 'text-delta', id: 'h' + box.childElementCount + '-' + i + Math.random(), delta: p.text });
      }
    });
  }
}

// ---- runs and their timelines ----

function stopPolling() {
  clearTimeout(state.runPoll);
  state.runPoll = 0;
}

// runsHash is the address of the runs page with run selected and the
// filter kept.
function runsHash(run) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(state.runFilter)) if (v) q.set(k, v);
  const qs = q.toString();
  return 'runs/' + encodeURIComponent(run || '') + (qs ? '?' + qs : '');
}

// runMatches says whether run r passes the filter f: its text (a part of
// the run's id, conversation, message or a tool's name, in any case), its
// state and a tool it called.
function runMatches(r, f) {
  const q = f.q.trim().toLowerCase();
  if (q && ![r.id, r.thread, r.message || '', ...(r.tools || [])].some((s) => s.toLowerCase().includes(q))) return false;
  if (f.state && r.state !== f.state) return false;
  return !f.tool || (r.tools || []).includes(f.tool);
}

async function showRuns(run, query) {
  stopPolling();
  state.runFilter = { q: query.get('q') || '', state: query.get('state') || '', tool: query.get('tool') || '' };
  $('run-q').value = state.runFilter.q;
  $('run-state-filter').value = state.runFilter.state;
  try {
    state.runs = await api('api/runs');
  } catch (err) { fail(err); }
  // The tools to pick from: the agent's, the page's, and any a run called.
  const tools = new Set([...(state.info ? [...state.info.agent.tools, ...state.info.browserTools] : []).map((t) => t.name),
    ...state.runs.flatMap((r) => r.tools || [])]);
  if (state.runFilter.tool) tools.add(state.runFilter.tool);
  fill($('run-tool'), el('option', { value: '' }, 'any tool'), [...tools].sort().map((t) => el('option', { value: t }, t)));
  $('run-tool').value = state.runFilter.tool;
  const shown = listRuns(run);
  if (!run && shown.length > 0) run = shown[0].id;
  if (run) showTimeline(run);
}

// listRuns lists the runs that pass the filter, run marked as selected,
// and returns them.
function listRuns(run) {
  const list = $('run-list');
  const shown = state.runs.filter((r) => runMatches(r, state.runFilter));
  list.replaceChildren(...shown.map((r) => el('li', {
    class: r.id === run ? 'active' : '', 'data-run': r.id, onclick: () => go(runsHash(r.id)),
  }, el('div', {}, r.message || r.id), el('div', { class: 'sub' },
    `${stateLabel(r.state, r.waitingFor)} · ${fmtMs(r.durationMs)} · ${r.modelCalls} model, ${r.toolCalls} tool calls · ${r.thread}`))));
  if (state.runs.length === 0) {
    list.replaceChildren(el('li', { class: 'muted' }, state.info && !state.info.recording
      ? 'Runs are not recorded: give the server a devui.Recorder as Config.Observer.'
      : 'No runs yet: send a message in the chat.'));
  } else if (shown.length === 0) {
    list.replaceChildren(el('li', { class: 'muted', id: 'run-none' }, `None of the ${state.runs.length} runs passes the filter.`));
  }
  return shown;
}

// filterRuns applies the filter's controls: the list, and the address
// (replaced, so that a reload keeps the filter and Back does not step
// through each key typed).
function filterRuns() {
  state.runFilter = { q: $('run-q').value, state: $('run-state-filter').value, tool: $('run-tool').value };
  history.replaceState(null, '', '#' + runsHash(state.selectedRun));
  listRuns(state.selectedRun);
}

async function showTimeline(run) {
  const detail = $('run-detail');
  if (state.selectedRun !== run) state.selectedSpan = -1;
  state.selectedRun = run;
  let tl;
  try {
    tl = await api('api/runs/' + encodeURIComponent(run));
  } catch (err) {
    detail.replaceChildren(el('p', { class: 'error-line' }, err.message));
    return;
  }
  if (state.selectedRun !== run || $('view-runs').hidden) return;
  drawTimeline(detail, tl);
  if (!tl.done) state.runPoll = setTimeout(() => showTimeline(run), 400);
}

// drawTimeline draws the run's spans as bars on one time axis, each under
// the span it belongs to.
function drawTimeline(detail, tl) {
  const total = Math.max(tl.done ? tl.durationMs : tl.now, 1);
  const pct = (ms) => (100 * Math.min(Math.max(ms, 0), total) / total).toFixed(3) + '%';
  const width = (a, b) => (100 * Math.max(b - a, 0) / total).toFixed(3) + '%';
  const children = new Map();
  for (const s of tl.spans) {
    if (!children.has(s.parent)) children.set(s.parent, []);
    children.get(s.parent).push(s);
  }
  const rows = [];
  const walk = (s, depth) => {
    rows.push([s, depth]);
    for (const c of children.get(s.id) || []) walk(c, depth + 1);
  };
  for (const s of children.get(-1) || []) walk(s, 0);

  const axis = el('div', { class: 'tl-lane' });
  const step = niceStep(total / 6);
  for (let t = 0; t <= total; t += step) axis.append(el('span', { class: 'tick', style: { left: pct(t) } }, fmtMs(t)));
  const tlBox = el('div', { class: 'tl', id: 'timeline' }, el('div', { class: 'tl-row tl-axis' }, el('div', { class: 'tl-label' }), axis));
  const seg = (s, cls, from, to, title) => el('div', {
    class: 'bar-seg ' + cls.split(' ').map((c) => 'k-' + c).join(' ') + (s.id === state.selectedSpan ? ' selected' : ''), style: { left: pct(from), width: width(from, to) },
    title, 'data-span': s.id, 'data-kind': s.kind, 'data-name': s.name, 'data-from': from, 'data-to': to,
    onclick: () => { state.selectedSpan = s.id; drawTimeline(detail, tl); },
  });
  for (const [s, depth] of rows) {
    const end = s.end !== undefined ? s.end : tl.now;
    const open = s.end === undefined ? ' open' : '';
    const lane = el('div', { class: 'tl-lane' });
    let label = s.name;
    let tokens = '';
    if (s.kind === 'model') {
      label = `model call · turn ${s.turn + 1}` + (s.attempt > 1 ? ` · attempt ${s.attempt}` : '');
      lane.append(seg(s, 'model' + (s.retried ? ' failed' : '') + open, s.start, end, `${s.name}: ${fmtMs(end - s.start)}`));
      if (s.firstToken !== undefined) lane.append(el('div', { class: 'first-token', style: { left: pct(s.firstToken) }, title: 'first token' }));
      if (s.retried && s.backoffMs > 0) lane.append(seg(s, 'backoff', end, end + s.backoffMs, `wait ${fmtMs(s.backoffMs)} before the next attempt`));
      if (s.usage) tokens = `${fmtNum(s.usage.input)} in · ${fmtNum(s.usage.output)} out · ${fmtNum(s.usage.thoughts)} thoughts · ${fmtNum(s.usage.cached)} cached`;
      if (s.retried) tokens = 'failed' + (s.failed ? ' (' + s.failed + ')' : '') + (s.reason ? ': ' + s.reason : '');
    } else if (s.kind === 'tool') {
      label = `${s.name}` + (s.parallel > 0 ? ` ∥${s.parallel + 1}` : '');
      if (s.wait) {
        const to = s.wait.to !== undefined ? s.wait.to : tl.now;
        lane.append(seg(s, 'wait' + (s.wait.to === undefined ? ' open' : ''), s.wait.from, to, `waiting for ${s.wait.kind}: ${fmtMs(to - s.wait.from)}`));
        // Decided before the other calls of its pause: it waits for
        // their decisions before it runs.
        const resumed = s.wait.resumed !== undefined ? s.wait.resumed : s.end === undefined ? tl.now : undefined;
        if (s.wait.to !== undefined && resumed !== undefined && resumed > s.wait.to) {
          lane.append(seg(s, 'queued' + (s.wait.resumed === undefined ? ' open' : ''), s.wait.to, resumed,
            `decided, waiting for the other decisions: ${fmtMs(resumed - s.wait.to)}`));
        }
      }
      const from = s.runStart !== undefined ? s.runStart : s.start;
      if (!s.wait || s.runStart !== undefined) {
        lane.append(seg(s, 'tool' + (s.error ? ' failed' : '') + open, from, end, `${s.name}: ${fmtMs(end - from)}`));
      }
      tokens = s.end !== undefined ? fmtMs(end - from) : s.wait && s.wait.to === undefined ? waitLabel(s.wait.kind)
        : s.wait && s.runStart === undefined ? 'waiting for the other decisions' : 'running';
      if (s.denied) tokens = 'denied';
    } else if (s.kind === 'memory') {
      const n = s.memory ? s.memory.memories.length : 0;
      label = 'memory · ' + s.name;
      lane.append(seg(s, 'memory' + (s.memory && s.memory.error && !s.memory.fallback ? ' failed' : ''), s.start, end, `memory ${s.name}: ${fmtMs(end - s.start)}`));
      tokens = s.name === 'search' ? `${n} found` + (s.memory && s.memory.fallback ? ' · lexical only' : s.memory && s.memory.hybrid ? ' · hybrid' : '')
        : `${n} remembered`;
    } else {
      label = (s.kind === 'run' ? 'run · ' : 'agent · ') + s.name;
      lane.append(seg(s, s.kind + open, s.start, end, `${s.name}: ${fmtMs(end - s.start)}`));
      tokens = fmtMs(end - s.start);
    }
    tlBox.append(el('div', { class: 'tl-row', 'data-span': s.id, 'data-kind': s.kind, 'data-depth': depth },
      el('div', { class: 'tl-label', style: { paddingLeft: (8 + depth * 16) + 'px' }, title: label }, label, el('span', { class: 'tl-tokens' }, tokens)), lane));
  }
  const u = tl.usage;
  const head = el('div', {},
    el('h2', {}, 'Run ', el('code', {}, tl.id)),
    el('table', { class: 'kv' },
      el('tr', {}, el('td', {}, 'conversation'), el('td', {}, el('a', { href: chatLink(tl.thread) }, tl.thread))),
      el('tr', {}, el('td', {}, 'message'), el('td', {}, tl.message || '')),
      el('tr', {}, el('td', {}, 'state'), el('td', { id: 'run-state' }, stateLabel(tl.state, tl.waitingFor) + (tl.done && tl.done.error ? ': ' + tl.done.error.message : ''))),
      el('tr', {}, el('td', {}, 'duration'), el('td', {}, fmtMs(tl.durationMs))),
      el('tr', {}, el('td', {}, 'tokens'), el('td', {}, `${fmtNum(u.input)} in · ${fmtNum(u.output)} out · ${fmtNum(u.thoughts)} thoughts · ${fmtNum(u.cached)} cached`)),
      el('tr', {}, el('td', {}, 'input billed'), el('td', { id: 'run-billed' }, billed(u)))),
    tl.truncated ? el('p', { class: 'error-line' }, 'This run had more steps than the recorder keeps: the later ones are not shown.') : null,
    el('div', { class: 'legend' },
      ...[['model', 'model call'], ['tool', 'tool call'], ['agent', 'agent as a tool'], ['memory', 'memory'], ['wait', 'waiting for a decision'],
        ['queued', 'decided, waiting for the other decisions'], ['backoff', 'retry wait']]
        .map(([c, t]) => el('span', {}, el('i', { class: 'bar-seg k-' + c, style: { position: 'static', display: 'inline-block' } }), t))));
  const sel = tl.spans.find((s) => s.id === state.selectedSpan);
  const panel = el('div', { id: 'span-detail' });
  detail.replaceChildren(head, tlBox, panel);
  if (sel) spanDetail(panel, tl, sel);
}

// billed says how a usage's input is billed: at the full input price, and
// read from a cache at the cached price.
function billed(u) { return `${fmtNum(u.fullPrice)} at full price · ${fmtNum(u.cached)} at cached price`; }

// waitedText says how long a decided call waited: for its decision, and
// then for the other decisions of its pause, if it was decided first.
function waitedText(w) {
  let text = fmtMs(w.to - w.from);
  if (w.resumed !== undefined && w.resumed > w.to) text += `, then ${fmtMs(w.resumed - w.to)} for the other decisions`;
  return text;
}

// waitLabel says what a call that waits waits for.
function waitLabel(kind) { return stateLabel('waiting', kind); }

function niceStep(x) {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(x, 0.001))));
  for (const m of [1, 2, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

// spanDetail shows what one span did; for a model call, the exact request
// it sent and the response it got.
function spanDetail(panel, tl, s) {
  const end = s.end !== undefined ? s.end : tl.now;
  if (s.kind === 'model') {
    const u = s.usage || {};
    panel.append(el('h3', {}, `Model call: ${s.name}, turn ${s.turn + 1}, attempt ${s.attempt}`),
      el('table', { class: 'kv' },
        el('tr', {}, el('td', {}, 'latency'), el('td', {}, fmtMs(end - s.start) + (s.firstToken !== undefined ? ` (first token after ${fmtMs(s.firstToken - s.start)})` : ''))),
        el('tr', {}, el('td', {}, 'streamed'), el('td', {}, s.stream ? 'yes' : 'no')),
        el('tr', {}, el('td', {}, 'finish reason'), el('td', {}, s.finishReason || (s.retried ? 'failed' : '…'))),
        s.retried ? el('tr', {}, el('td', {}, 'failure'), el('td', { class: 'error-line' }, [s.failed, s.reason].filter(Boolean).join(': ') || 'failed')) : null,
        el('tr', {}, el('td', {}, 'function calls'), el('td', {}, String(s.calls || 0)))),
      el('table', { class: 'tokens' }, el('tr', {}, el('th', {}, 'input'), el('th', {}, 'output'), el('th', {}, 'thoughts'), el('th', {}, 'cached'),
        el('th', { title: 'input billed at the full price' }, 'full price')),
        el('tr', {}, el('td', { class: 'tok-in' }, fmtNum(u.input)), el('td', { class: 'tok-out' }, fmtNum(u.output)),
          el('td', { class: 'tok-thoughts' }, fmtNum(u.thoughts)), el('td', { class: 'tok-cached' }, fmtNum(u.cached)),
          el('td', { class: 'tok-full' }, fmtNum(u.fullPrice)))));
    const req = el('pre', { class: 'json', id: 'call-request' }, 'loading…');
    const resp = el('pre', { class: 'json', id: 'call-response' }, 'loading…');
    panel.append(el('h3', {}, 'Request'), req, el('h3', {}, 'Response'), resp);
    api(`api/runs/${encodeURIComponent(tl.id)}/calls/${s.id}`).then((c) => {
      fillJSON(req, c.request);
      if (c.response) fillJSON(resp, c.response); else resp.textContent = '(no response: the call failed or is in flight)';
    }).catch((err) => { req.textContent = err.message; resp.textContent = ''; });
  } else if (s.kind === 'tool') {
    panel.append(el('h3', {}, `Tool call: ${s.name}`),
      el('table', { class: 'kv' },
        el('tr', {}, el('td', {}, 'call id'), el('td', {}, s.callId || '')),
        el('tr', {}, el('td', {}, 'turn'), el('td', {}, String(s.turn + 1))),
        el('tr', {}, el('td', {}, 'ran for'), el('td', {}, s.end !== undefined ? fmtMs(end - (s.runStart !== undefined ? s.runStart : s.start))
          : s.wait && s.wait.to === undefined ? waitLabel(s.wait.kind) : s.wait && s.runStart === undefined ? 'waiting for the other decisions' : 'running')),
        s.wait ? el('tr', {}, el('td', {}, 'waited'), el('td', {}, `${fmtMs((s.wait.to !== undefined ? s.wait.to : tl.now) - s.wait.from)} for ${s.wait.kind}` +
          (s.wait.to !== undefined ? (s.wait.expired ? ' (expired)' : s.wait.approved ? ' (approved)' : ' (denied)') : '') +
          (s.wait.to !== undefined && s.runStart === undefined && s.end === undefined ? ', then waiting for the other decisions'
            : s.wait.resumed !== undefined && s.wait.resumed > s.wait.to ? `, then ${fmtMs(s.wait.resumed - s.wait.to)} for the other decisions` : ''))) : null,
        el('tr', {}, el('td', {}, 'in parallel with'), el('td', {}, `${s.parallel} other call${s.parallel === 1 ? '' : 's'}`))),
      el('h3', {}, 'Arguments'), jsonView(s.args || {}),
      el('h3', {}, s.error ? 'Error' : 'Result'), s.error ? el('pre', { class: 'json' }, s.error) : s.output !== undefined ? jsonView(s.output) : el('pre', { class: 'json' }, '…'));
  } else if (s.kind === 'memory' && s.memory) {
    const m = s.memory;
    panel.append(el('h3', {}, s.name === 'search' ? 'Memory search' : 'Memories remembered'),
      el('table', { class: 'kv' },
        s.name === 'search' ? el('tr', {}, el('td', {}, 'query'), el('td', {}, m.query)) : null,
        s.name === 'search' ? el('tr', {}, el('td', {}, 'ranking'), el('td', {}, m.hybrid ? 'hybrid: words and embeddings, fused'
          : m.fallback ? 'by words only: the query could not be embedded' : 'by words')) : null,
        m.error ? el('tr', {}, el('td', {}, m.fallback ? 'embedding' : 'error'), el('td', { class: 'error-line' }, m.error)) : null,
        el('tr', {}, el('td', {}, 'took'), el('td', {}, fmtMs(end - s.start)))),
      el('ol', { class: 'memory-list' }, ...m.memories.map((x) => el('li', {}, memoryLine(x),
        x.lexical || x.vector ? el('span', { class: 'muted' }, ` (rank ${[x.lexical ? 'by words ' + x.lexical : '', x.vector ? 'by meaning ' + x.vector : ''].filter(Boolean).join(', ')})`) : null))));
  } else {
    panel.append(el('h3', {}, `${s.kind === 'run' ? 'Run' : 'Agent run'}: ${s.name}`), el('p', {}, fmtMs(end - s.start)));
  }
}

// memoryLine says one memory: its text, who said it, when, and where.
function memoryLine(m) {
  const when = m.time ? new Date(m.time).toLocaleDateString() : '';
  const from = [m.author, when, m.thread ? 'in ' + m.thread : ''].filter(Boolean).join(', ');
  return el('span', { class: 'memory' }, m.text, from ? el('span', { class: 'muted' }, ' — ' + from) : null);
}

// ---- conversations ----

async function showThreads(thread) {
  const list = $('thread-list');
  // morePage appends the page of the listing at cursor, and a button for
  // the next one.
  const morePage = async (cursor) => {
    const page = await api('api/threads' + (cursor ? '?cursor=' + encodeURIComponent(cursor) : ''));
    // A thread's run in progress is labelled with its recorded state.
    const states = new Map();
    if (page.threads.some((t) => t.run)) {
      for (const r of await api('api/runs').catch(() => [])) states.set(r.id, stateLabel(r.state, r.waitingFor));
    }
    list.append(...page.threads.map((t) => el('li', {
      class: t.id === thread ? 'active' : '', 'data-thread': t.id, onclick: () => go('threads/' + encodeURIComponent(t.id)),
    }, el('div', {}, t.id, ' ', t.run ? el('span', { class: 'badge wait' }, states.get(t.run) || 'in progress') : null),
    el('div', { class: 'sub' }, `${t.len} contents · ${new Date(t.updated).toLocaleString()}`))));
    if (page.next) {
      const more = el('li', { class: 'muted more', onclick: () => { more.remove(); morePage(page.next).catch(fail); } }, 'More…');
      list.append(more);
    }
    return page;
  };
  try {
    list.replaceChildren();
    const page = await morePage('');
    if (page.threads.length === 0) list.replaceChildren(el('li', { class: 'muted' }, 'No conversations yet.'));
  } catch (err) { fail(err); }
  const detail = $('thread-detail');
  if (!thread) return;
  let data;
  try {
    data = await api('api/threads/' + encodeURIComponent(thread));
  } catch (err) {
    detail.replaceChildren(el('p', { class: 'error-line' }, err.message));
    return;
  }
  const runs = await api('api/runs?thread=' + encodeURIComponent(thread)).catch(() => []);
  const pending = (data.run && data.run.pending) || [];
  const waitingFor = pending.some((p) => p.kind === 'approval') ? 'approval' : pending.length > 0 ? pending[0].kind : '';
  fill(detail,
    el('h2', {}, 'Conversation ', el('code', {}, data.id)),
    el('div', { class: 'actions' },
      el('button', { class: 'primary', id: 'continue', type: 'button', onclick: () => { state.thread = ''; go('chat/' + encodeURIComponent(data.id)); } }, 'Continue in chat'),
      ' ', el('button', { id: 'save-eval', type: 'button', onclick: () => saveEvalCase(data.id).catch(fail) }, 'Save as eval case'),
      ' ', el('span', { class: 'muted' }, `${data.len} contents` +
        (data.run ? ` · a run is ${data.run.state === 'waiting' ? stateLabel('waiting', waitingFor) : 'in progress'} (${data.run.id})` : ''))),
    runs.length > 0 ? el('p', {}, 'Recorded runs: ', ...runs.map((r) => el('a', { href: '#runs/' + encodeURIComponent(r.id), class: 'run-link' }, r.id, ' '))) : null,
    state.info && state.info.artifactsPath ? threadFiles(data.id) : null,
    data.from > 0 ? el('p', { class: 'muted' }, `(${data.from} earlier contents not shown)`) : null,
    ...data.contents.map((c, i) => contentView(c, data.from + i)));
}

// threadFiles lists a conversation's files (and the user's own), the
// latest version of each, previewed.
function threadFiles(thread) {
  const box = el('div', { class: 'thread-files', id: 'thread-files' }, el('h3', {}, 'Files'), el('p', { class: 'muted' }, 'Loading…'));
  api('api/artifacts/' + encodeURIComponent(thread)).then((data) => {
    fill(box, el('h3', {}, 'Files'), data.files.length === 0 ? el('p', { class: 'muted' }, 'No files.') :
      el('div', { class: 'files' }, ...data.files.map((f) => filePreview({
        name: f.name, mediaType: f.mediaType, size: f.size, version: f.version, url: artifactsURL(thread, f.name, f.version),
      }))));
  }).catch((err) => fill(box, el('h3', {}, 'Files'), el('p', { class: 'error-line' }, err.message)));
  return box;
}

// ---- files ----

// artifactsURL is the dev UI's link to a version of the file name of
// thread (the server's artifacts routes, under api/artifacts/).
function artifactsURL(thread, name, version) {
  return 'api/artifacts/' + encodeURIComponent(thread) + '/' + name.split('/').map(encodeURIComponent).join('/') +
    (version ? '?version=' + version : '');
}

// devURL turns a link of the chat's stream, under the server's artifacts
// path, into the dev UI's.
function devURL(u) {
  const p = state.info && state.info.artifactsPath;
  return p && u.startsWith(p) ? 'api/artifacts/' + u.slice(p.length) : u;
}

// historyFile returns the file a stored part refers to
// ("artifact:NAME?version=N"), or null for another file.
function historyFile(fd) {
  const m = /^artifact:([^?]*)\?version=(\d+)$/.exec(fd.fileUri || '');
  if (!m || !state.thread) return null;
  const name = decodeURIComponent(m[1]);
  return { name, mediaType: fd.mimeType, version: Number(m[2]), url: artifactsURL(state.thread, name, Number(m[2])) };
}

function fmtBytes(n) {
  return n < 1024 ? n + ' B' : n < 1 << 20 ? (n / 1024).toFixed(1) + ' KB' : (n / (1 << 20)).toFixed(1) + ' MB';
}

// filePreview shows a file: its name, type and a download link, with a
// preview: an image as it is, the start of a text file; a PDF, and any
// other file, as its link only.
function filePreview(f) {
  const box = el('div', { class: 'file', 'data-name': f.name, 'data-type': f.mediaType || '' },
    el('div', { class: 'file-head' }, el('span', { class: 'file-name' }, f.name), el('span', { class: 'badge' }, f.mediaType),
      f.version ? el('span', { class: 'badge' }, 'v' + f.version) : null,
      f.size !== undefined ? el('span', { class: 'badge' }, fmtBytes(f.size)) : null,
      el('a', { href: f.url, download: f.name.split('/').pop(), class: 'download' }, 'Download')));
  const type = (f.mediaType || '').split(';')[0];
  if (/^image\/(png|jpeg|gif|webp)$/.test(type)) {
    box.append(el('img', { src: f.url, alt: f.name, class: 'preview' }));
  } else if (/^text\/(plain|csv|markdown)$|^application\/json$/.test(type)) {
    const pre = el('pre', { class: 'preview text' }, '…');
    box.append(pre);
    // A file just attached is a data: URL, which the page's policy does
    // not let it fetch: it is decoded here.
    const start = f.url.startsWith('data:')
      ? Promise.resolve(new TextDecoder().decode(Uint8Array.from(atob(f.url.slice(f.url.indexOf(',') + 1)), (c) => c.charCodeAt(0)).slice(0, 4096)))
      : fetch(f.url, { headers: { Range: 'bytes=0-4095' } })
        .then((r) => (r.ok ? r.text() : Promise.reject(new Error(r.status + ' ' + r.statusText))));
    start.then((t) => { pre.textContent = t; })
      .catch((err) => { pre.textContent = 'no preview: ' + err.message; });
  }
  return box;
}

// contentView shows one stored content with every part.
function contentView(c, i) {
  return el('div', { class: 'content ' + (c.role || ''), 'data-index': i },
    el('div', { class: 'role' }, `#${i} ${c.role || '(no role)'}`),
    ...(c.parts || []).map((p) => {
      const kind = partKind(p);
      const rest = Object.assign({}, p);
      delete rest.thoughtSignature;
      delete rest.thought;
      let body;
      if (kind === 'text' || kind === 'thought') body = el('div', { class: 'text' }, p.text);
      else body = jsonView(rest);
      return el('div', { class: 'part', 'data-kind': kind },
        el('div', { class: 'head' }, el('span', { class: 'badge' }, kind),
          p.thoughtSignature ? el('span', { class: 'badge signature', title: 'the signature stays on the server' }, 'thought signature ' + p.thoughtSignature.replace(/^\(|, not shown\)$/g, '')) : null),
        body);
    }));
}

function partKind(p) {
  if (p.thought) return 'thought';
  for (const k of ['text', 'functionCall', 'functionResponse', 'inlineData', 'fileData', 'executableCode', 'codeExecutionResult']) {
    if (k in p) return k;
  }
  const keys = Object.keys(p).filter((k) => k !== 'thoughtSignature');
  return keys[0] || (p.thoughtSignature ? 'signature only' : 'empty');
}

// ---- the agent ----

function showAgent() {
  const info = state.info;
  const detail = $('agent-detail');
  if (!info) return;
  const a = info.agent;
  const l = a.limits;
  const row = (k, v) => el('tr', {}, el('td', {}, k), el('td', {}, v));
  const sys = a.config && a.config.systemInstruction ? textOf(a.config.systemInstruction) : '';
  fill(detail,
    el('h2', {}, 'Agent ', el('code', { id: 'agent-name' }, a.name || '(no name: set agent.Config.Name)')),
    el('table', { class: 'kv' },
      row('model', el('code', { id: 'agent-model' }, a.model)),
      row('typed answer', a.typed ? 'yes' : 'no'),
      row('system instruction', sys || '(none)')),
    el('h3', {}, `Tools (${a.tools.length}), as Gemini receives them`),
    ...a.tools.map((t) => el('details', { class: 'tool-decl', 'data-tool': t.name, open: true },
      el('summary', {}, el('code', {}, t.name), ' ', el('span', { class: 'muted' }, t.description)),
      jsonView(t.declaration), toolRunForm(t))),
    info.browserTools.length > 0 ? el('h3', {}, 'Browser tools (declared by this page)') : null,
    ...info.browserTools.map((t) => el('details', { 'data-tool': t.name },
      el('summary', {}, el('code', {}, t.name), ' ', el('span', { class: 'muted' }, t.description || '')),
      jsonView(t))),
    el('h3', {}, 'Limits'),
    el('table', { class: 'kv', id: 'limits' },
      row('model turns per run', l.maxTurns),
      row('tools running at once', l.maxParallel),
      row('calls per turn', l.maxCallsPerTurn),
      row('tool timeout', l.toolTimeoutMs ? fmtMs(l.toolTimeoutMs) : 'none'),
      row('tool output', l.maxOutputBytes > 0 ? fmtNum(l.maxOutputBytes) + ' bytes' : 'no bound'),
      row('model call attempts', `${l.retry.maxAttempts} (backoff ${fmtMs(l.retry.initialDelayMs)} to ${fmtMs(l.retry.maxDelayMs)}, ×${l.retry.multiplier})`),
      row('re-asks of an empty reply', l.retry.maxReasks),
      row('approval timeout', fmtMs(info.server.approvalTimeoutMs)),
      row('run timeout', info.server.runTimeoutMs ? fmtMs(info.server.runTimeoutMs) : 'none'),
      row('runs in flight', info.server.maxRuns || 'no bound'),
      row('runs in flight per user', info.server.maxRunsPerUser || 'no bound'),
      row('threads per user', info.server.maxThreadsPerUser || 'no bound'),
      row('stored per user', info.server.maxBytesPerUser ? fmtNum(info.server.maxBytesPerUser) + ' bytes' : 'no bound'),
      row('request body', fmtNum(info.server.maxBodyBytes) + ' bytes')),
    el('h3', {}, 'Request config'),
    jsonView(a.config));
}

// argsSkeleton is the arguments a Run form starts with: each property the
// tool's declaration requires, with an empty value of its type.
function argsSkeleton(decl) {
  const schema = decl && (decl.parameters || decl.parametersJsonSchema);
  const out = {};
  if (!schema || !schema.properties) return out;
  const empty = { string: '', number: 0, integer: 0, boolean: false, array: [], object: {} };
  for (const name of schema.required || []) {
    const p = schema.properties[name] || {};
    const type = String(Array.isArray(p.type) ? p.type[0] : p.type || '').toLowerCase();
    out[name] = type in empty ? empty[type] : null;
  }
  return out;
}

// toolRunForm runs a tool by hand (api/tools/{name}/run): its arguments
// as JSON, checked by the server against the tool's schema; the result,
// or the error the model would read, and how long the call took.
function toolRunForm(t) {
  const args = el('textarea', { class: 'run-args', rows: 3, spellcheck: 'false', 'aria-label': `Arguments of ${t.name}, as JSON` },
    JSON.stringify(argsSkeleton(t.declaration), null, 2));
  const btn = el('button', { type: 'submit', class: 'primary' }, 'Run');
  const out = el('div', { class: 'run-result', 'aria-live': 'polite' });
  const show = (st, ...children) => { out.dataset.state = st; fill(out, ...children); };
  const form = el('form', { class: 'run-tool' }, el('div', { class: 'label' }, 'Run by hand, with these arguments (JSON)'),
    args, el('div', { class: 'actions' }, btn), out);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    let parsed;
    try { parsed = JSON.parse(args.value.trim() || '{}'); } catch (err) {
      show('refused', el('div', { class: 'error-line' }, 'The arguments are not JSON: ' + err.message));
      return;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      show('refused', el('div', { class: 'error-line' }, 'The arguments must be a JSON object.'));
      return;
    }
    btn.disabled = true;
    show('running', el('span', { class: 'muted' }, 'running…'));
    try {
      const r = await api(`api/tools/${encodeURIComponent(t.name)}/run`,
        { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ args: parsed }) });
      const head = r.invalid ? 'invalid arguments: the tool did not run; the model would read' : r.isError ? 'error, as the model would read it' : 'result';
      show(r.invalid ? 'invalid' : r.isError ? 'error' : 'done',
        el('div', { class: 'label' }, `${head} · ${fmtMs(r.durationMs)}`),
        r.isError ? el('pre', { class: 'json error' }, String(r.output)) : jsonView(r.output, { class: 'output' }));
    } catch (err) {
      show('refused', el('div', { class: 'error-line' }, err.message));
    } finally { btn.disabled = false; }
  });
  return form;
}

// ---- start ----

// ---- evals: cases saved from conversations, kept in the browser, run by the server ----

const evalKey = 'toolnexus.devui.evalCases';

// evalCases returns the saved cases: ADK eval cases, as the server wrote them.
function evalCases() {
  try {
    const v = JSON.parse(localStorage.getItem(evalKey) || '[]');
    return Array.isArray(v) ? v : [];
  } catch { return []; }
}

function setEvalCases(cases) { localStorage.setItem(evalKey, JSON.stringify(cases)); }

function evalSet() { return { eval_set_id: 'devui', name: 'dev UI', eval_cases: evalCases() }; }

// saveEvalCase saves thread as an eval case, replacing one of its id.
async function saveEvalCase(thread) {
  const set = await api('api/threads/' + encodeURIComponent(thread) + '/evalcase');
  const c = set.eval_cases[0];
  const cases = evalCases().filter((x) => x.eval_id !== c.eval_id);
  cases.push(c);
  setEvalCases(cases);
  toast(`Saved ${c.eval_id} as an eval case (${cases.length} in the set): see Evals`, 'ok');
}

// showEvals lists the saved cases, with what runs them.
function showEvals(results) {
  const cases = evalCases();
  const detail = $('evals-detail');
  const download = () => {
    const a = el('a', { href: 'data:application/json;charset=utf-8,' + encodeURIComponent(JSON.stringify(evalSet(), null, 2)), download: 'devui.evalset.json' });
    document.body.append(a);
    a.click();
    a.remove();
  };
  const remove = (id) => { setEvalCases(evalCases().filter((x) => x.eval_id !== id)); showEvals(); };
  const turns = (c) => (c.conversation || []).length;
  fill(detail,
    el('h2', {}, 'Evals'),
    el('p', { class: 'muted' }, 'Cases saved from conversations (Conversations, Save as eval case), kept in this browser. ',
      'Run scores each once with the default criteria: the tool trajectory, exactly, and the answer\'s ROUGE-1 match (0.8). ',
      'The .evalset.json file runs under go test with package eval, and in ADK.'),
    cases.length === 0 ? el('p', { class: 'muted', id: 'no-evals' }, 'No eval cases yet.') :
      el('ul', { class: 'list', id: 'eval-cases' }, ...cases.map((c) => el('li', { 'data-case': c.eval_id },
        el('code', {}, c.eval_id), ' ', el('span', { class: 'muted' }, `${turns(c)} turn${turns(c) === 1 ? '' : 's'}`), ' ',
        el('button', { type: 'button', class: 'remove', onclick: () => remove(c.eval_id) }, 'Remove')))),
    el('div', { class: 'actions' },
      el('button', { class: 'primary', id: 'run-evals', type: 'button', disabled: cases.length === 0, onclick: () => runEvals().catch(fail) }, 'Run'),
      ' ', el('button', { id: 'download-evals', type: 'button', disabled: cases.length === 0, onclick: download }, 'Download .evalset.json')),
    el('div', { id: 'eval-results' }, results || null));
}

// runEvals runs the saved cases on the server and shows each metric's
// score and explanation.
async function runEvals() {
  const button = $('run-evals');
  button.disabled = true;
  button.textContent = 'Running…';
  let rep;
  try {
    rep = await api('api/evals/run', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(evalSet()) });
  } finally {
    button.disabled = false;
    button.textContent = 'Run';
  }
  const cls = (status) => status === 'PASSED' ? 'badge par' : status === 'FAILED' ? 'badge bad' : 'badge wait';
  const num = (v) => (Math.round(v * 100) / 100).toString();
  showEvals(el('div', { id: 'eval-report', 'data-status': rep.status },
    el('p', {}, el('span', { class: cls(rep.status) }, rep.status), ' ',
      `${rep.passed} passed · ${rep.failed} failed · ${rep.notEvaluated} not evaluated · ${fmtMs(rep.durationMs)}`),
    ...rep.cases.map((c) => el('div', { class: 'eval-case', 'data-case': c.id, 'data-status': c.status },
      el('h3', {}, el('code', {}, c.id), ' ', el('span', { class: cls(c.status) }, c.status)),
      c.error ? el('p', { class: 'error-line' }, c.error) : null,
      el('table', { class: 'kv' },
        el('tr', {}, el('th', {}, 'metric'), el('th', {}, 'score'), el('th', {}, 'threshold'), el('th', {}, 'status'), el('th', {}, 'why')),
        ...c.metrics.map((m) => el('tr', { 'data-metric': m.metric, 'data-status': m.status },
          el('td', {}, m.metric), el('td', { class: 'score' }, num(m.value)), el('td', {}, num(m.threshold)),
          el('td', {}, el('span', { class: cls(m.status) }, m.status)),
          el('td', { class: 'why' }, m.reason || '',
            ...(m.turns || []).map((t, i) => el('div', { class: 'turn' }, `turn ${i + 1}: ${num(t.value)}`, t.reason ? ' · ' + t.reason : '',
              t.detail ? el('pre', { class: 'detail-text' }, t.detail) : null))))))))));
}

async function start() {
  $('composer').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = $('input').value.trim();
    if (!text || state.stream) return;
    $('input').value = '';
    send(text).catch(fail);
  });
  $('attach').addEventListener('change', () => {
    $('attached').textContent = Array.from($('attach').files).map((f) => f.name).join(', ');
  });
  $('input').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      $('composer').requestSubmit();
    }
  });
  $('stop').addEventListener('click', () => {
    const run = state.current && state.current.run;
    const msgs = $('messages').querySelectorAll('.msg.assistant');
    const last = msgs.length ? msgs[msgs.length - 1].dataset.run : run;
    if (last) api('api/runs/' + encodeURIComponent(last) + '/cancel', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }).catch(fail);
  });
  const fresh = () => { state.thread = ''; go('chat/' + newID('chat-')); };
  $('new-chat').addEventListener('click', fresh);
  $('new-thread').addEventListener('click', fresh);
  window.addEventListener('hashchange', route);
  $('run-q').addEventListener('input', filterRuns);
  $('run-state-filter').addEventListener('change', filterRuns);
  $('run-tool').addEventListener('change', filterRuns);
  try {
    state.info = await api('api/info');
    const title = state.info.title || ('dev UI · ' + (state.info.agent.name || state.info.agent.model));
    $('title').textContent = title;
    document.title = title;
    $('who').textContent = state.info.user;
    if (state.info.live) setupVoice(); // voice.js
  } catch (err) { fail(err); }
  route();
}

start();

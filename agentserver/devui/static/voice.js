// The dev UI's voice mode: a live session of the agent (api/live, package
// agentserver/live) over a websocket. The microphone is captured at
// 16 kHz and sent as raw 16-bit PCM; the model's speech, 16-bit PCM at
// 24 kHz, is played back with Web Audio; transcripts and tool cards are
// shown as they come. Loaded after app.js, whose helpers it uses.
'use strict';

const voice = {
  ws: null,
  mic: null, // {stream, ctx, node}
  out: null, // {ctx, meter, next, sources}
  view: null, // {msg, user, said, cards}
  played: 0, // the samples the page's audio output received (not silence)
};

// setupVoice shows the microphone button: the server serves api/live.
function setupVoice() {
  const btn = el('button', { id: 'mic', type: 'button', title: 'Talk to the agent (voice mode)', 'aria-pressed': 'false' }, 'Voice');
  btn.addEventListener('click', () => (voice.mic ? stopTalking() : startTalking()).catch(fail));
  $('stop').before(btn);
}

function voiceStatus(s) {
  const b = $('mic');
  b.dataset.state = s;
  b.textContent = s === 'listening' ? 'Stop talking' : 'Voice';
  b.setAttribute('aria-pressed', String(s === 'listening'));
}

// startTalking opens the session on the chat's thread (once), then the
// microphone.
async function startTalking() {
  if (!voice.ws) await openVoice();
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const ctx = new AudioContext({ sampleRate: 16000 });
  await ctx.audioWorklet.addModule('static/voice-worklet.js');
  const src = ctx.createMediaStreamSource(stream);
  const node = new AudioWorkletNode(ctx, 'capture', { numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1] });
  node.port.onmessage = (e) => {
    const f = e.data;
    const pcm = new Int16Array(f.length);
    for (let i = 0; i < f.length; i++) pcm[i] = Math.max(-32768, Math.min(32767, Math.round(f[i] * 32768)));
    if (voice.ws && voice.ws.readyState === WebSocket.OPEN) voice.ws.send(pcm.buffer);
  };
  const mute = ctx.createGain();
  mute.gain.value = 0;
  src.connect(node);
  node.connect(mute);
  mute.connect(ctx.destination);
  voice.mic = { stream, ctx, node };
  voiceStatus('listening');
}

// stopTalking turns the microphone off: the model answers what it heard.
async function stopTalking() {
  const m = voice.mic;
  voice.mic = null;
  if (m) {
    m.node.port.onmessage = null;
    m.stream.getTracks().forEach((t) => t.stop());
    await m.ctx.close();
  }
  if (voice.ws && voice.ws.readyState === WebSocket.OPEN) voice.ws.send(JSON.stringify({ type: 'audio_end' }));
  voiceStatus('answering');
}

async function openVoice() {
  if (!voice.out) {
    const ctx = new AudioContext({ sampleRate: 24000 });
    await ctx.audioWorklet.addModule('static/voice-worklet.js');
    // The meter counts the samples that reach the output, and passes
    // them on.
    const meter = new AudioWorkletNode(ctx, 'meter', { numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1] });
    meter.port.onmessage = (e) => {
      voice.played += e.data;
      $('mic').dataset.played = String(voice.played);
    };
    meter.connect(ctx.destination);
    voice.out = { ctx, meter, next: 0, sources: [] };
  }
  voice.out.ctx.resume();
  const url = new URL('api/live?thread=' + encodeURIComponent(state.thread), location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  voice.ws = ws;
  return new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error('the voice session could not be opened'));
    ws.onmessage = (e) => {
      if (typeof e.data === 'string') voiceMessage(JSON.parse(e.data));
      else play(e.data);
    };
    ws.onclose = (e) => {
      if (voice.ws === ws) voice.ws = null;
      if (voice.mic) stopTalking().catch(fail);
      voiceStatus('off');
      if (e.code !== 1000 && e.code !== 1005) toast('voice session ended: ' + (e.reason || 'code ' + e.code));
    };
  });
}

// play schedules a chunk of the model's speech after the ones before.
function play(buf) {
  const o = voice.out;
  const pcm = new Int16Array(buf);
  const ab = o.ctx.createBuffer(1, pcm.length, 24000);
  const ch = ab.getChannelData(0);
  for (let i = 0; i < pcm.length; i++) ch[i] = pcm[i] / 32768;
  const src = o.ctx.createBufferSource();
  src.buffer = ab;
  src.connect(o.meter);
  const at = Math.max(o.ctx.currentTime + 0.05, o.next);
  src.start(at);
  o.next = at + ab.duration;
  o.sources.push(src);
  src.onended = () => { o.sources = o.sources.filter((s) => s !== src); };
}

// interrupt drops the speech not played yet: the user spoke over it.
function interrupt() {
  const o = voice.out;
  if (!o) return;
  o.sources.forEach((s) => s.stop());
  o.sources = [];
  o.next = 0;
}

// turnView returns the messages of the turn in progress: the user's words
// and the agent's answer, made at its first event.
function turnView() {
  if (!voice.view) {
    const box = $('messages');
    const user = el('div', { class: 'bubble' });
    box.append(el('div', { class: 'msg user voice' }, user));
    const msg = new AssistantMessage(box);
    msg.el.classList.add('voice');
    const said = el('div', { class: 'text' });
    msg.body.append(said);
    voice.view = { msg, user, said, cards: new Map() };
  }
  return voice.view;
}

function voiceMessage(m) {
  switch (m.type) {
    case 'ready':
    case 'ping':
      return;
    case 'input_transcript':
      turnView().user.append(m.text);
      break;
    case 'output_transcript':
    case 'text':
      turnView().said.append(m.text);
      break;
    case 'tool_call':
    case 'approval': {
      const v = turnView();
      let card = v.cards.get(m.id);
      if (!card) {
        card = new ToolCard(v.msg, m.id, m.name, m.args || {});
        card.onDecide = (approved) => {
          voice.ws.send(JSON.stringify({ type: 'decide', id: m.id, approved }));
          card.decided(approved, approved ? '' : 'denied in the voice session');
        };
        v.cards.set(m.id, card);
        v.said.before(card.el);
      }
      if (m.type === 'approval') card.waitApproval();
      break;
    }
    case 'tool_result': {
      const card = turnView().cards.get(m.id);
      if (!card) break;
      if (m.is_error) card.failed(typeof m.output === 'string' ? m.output : JSON.stringify(m.output));
      else card.done(m.output);
      break;
    }
    case 'tool_cancelled': {
      const card = turnView().cards.get(m.id);
      if (card) { card.ended(); card.settled(); card.set('cancelled', 'cancelled', 'bad'); }
      break;
    }
    case 'interrupted':
      interrupt();
      break;
    case 'turn_complete':
      if (voice.view) {
        voice.view.msg.el.classList.remove('running');
        voice.view.msg.el.dataset.done = '1';
      }
      voice.view = null;
      if (!voice.mic) voiceStatus('off');
      break;
    case 'error':
      toast(m.message);
      break;
  }
  scrollDown();
}

// The voice mode's audio worklets (voice.js), on the audio thread, where
// no sample is lost to a busy page.
'use strict';

// capture hands the microphone's samples to the page, 2048 at a time.
class Capture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.buf = new Float32Array(2048);
    this.n = 0;
  }

  process(inputs) {
    const ch = inputs[0] && inputs[0][0];
    if (ch) {
      for (let i = 0; i < ch.length; i++) {
        this.buf[this.n++] = ch[i];
        if (this.n === this.buf.length) {
          this.port.postMessage(this.buf);
          this.buf = new Float32Array(2048);
          this.n = 0;
        }
      }
    }
    return true;
  }
}

// meter passes the model's speech on to the output, and tells the page
// how many samples that are not silence it passed.
class Meter extends AudioWorkletProcessor {
  process(inputs, outputs) {
    const inp = inputs[0] && inputs[0][0];
    const out = outputs[0][0];
    if (inp) {
      out.set(inp);
      let n = 0;
      for (let i = 0; i < inp.length; i++) if (inp[i] !== 0) n++;
      if (n) this.port.postMessage(n);
    }
    return true;
  }
}

registerProcessor('capture', Capture);
registerProcessor('meter', Meter);

import { useEffect, useState } from 'react';

// Composer is the message box, with Send, and Stop while a run goes on.
export default function Composer({ busy, onSend, onStop }) {
  const [text, setText] = useState('');
  // Keep the newest of the conversation in view as it grows.
  useEffect(() => {
    window.scrollTo(0, document.body.scrollHeight);
  });
  const submit = (e) => {
    e.preventDefault();
    if (!text.trim() || busy) return;
    onSend(text.trim());
    setText('');
  };
  return (
    <form className="composer" onSubmit={submit}>
      <input
        name="message"
        value={text}
        onChange={(e) => setText(e.target.value)}
        placeholder="What's the weather in Paris and Tokyo?"
        autoFocus
      />
      {busy ? <button type="button" className="stop" onClick={onStop}>Stop</button> : <button type="submit" className="send">Send</button>}
    </form>
  );
}

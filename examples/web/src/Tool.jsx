// Tool shows one tool call: its name and arguments, its state, its
// progress while it runs, its result, and Approve/Deny while it waits for
// a decision. Both pages map their protocol's call onto these props; state
// is the AI SDK's vocabulary (input-available, approval-requested,
// approval-responded, output-available, output-error, output-denied).
export default function Tool({ id, name, input, state, output, error, progress, onDecide }) {
  const waiting = state === 'approval-requested';
  const running = state === 'input-streaming' || state === 'input-available';
  return (
    <div className="tool" data-id={id} data-name={name} data-state={state}>
      <div className="call">
        <code>{name}({input === undefined ? '' : JSON.stringify(input)})</code>
        <span className={`state ${state}`}>{labels[state] ?? state}</span>
      </div>
      {running && progress && (
        <div className="progress">
          {progress.total > 0 && <progress value={progress.done} max={progress.total} />}
          <span>{progress.message || `${progress.done}${progress.total ? ` / ${progress.total}` : ''}`}</span>
        </div>
      )}
      {waiting && onDecide && (
        <div className="actions">
          <button type="button" className="approve" onClick={() => onDecide(true)}>Approve</button>
          <button type="button" className="deny" onClick={() => onDecide(false)}>Deny</button>
        </div>
      )}
      {output !== undefined && <pre className="output">{typeof output === 'string' ? output : JSON.stringify(output, null, 1)}</pre>}
      {error && <pre className="output error">{error}</pre>}
    </div>
  );
}

const labels = {
  'input-streaming': 'running',
  'input-available': 'running',
  'approval-requested': 'needs approval',
  'approval-responded': 'approved',
  'output-available': 'done',
  'output-error': 'error',
  'output-denied': 'denied',
};

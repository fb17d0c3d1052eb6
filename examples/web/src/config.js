// Where the Go server is, and which thread the page shows: both in the
// page's address, so that a reload finds the same conversation.
//
//   ?api=http://localhost:8080   the server (default: VITE_API_URL, else http://localhost:8080)
//   &chat=<id>                   the thread (a new one when absent)
//   #agui                        the AG-UI page (the AI SDK page otherwise)
const params = new URLSearchParams(location.search);

export const api = (params.get('api') ?? import.meta.env.VITE_API_URL ?? 'http://localhost:8080').replace(/\/$/, '');

export const threadId = params.get('chat') ?? newThread();

function newThread() {
  const id = crypto.randomUUID();
  params.set('chat', id);
  history.replaceState(null, '', `?${params}${location.hash}`);
  return id;
}

// newChat opens a new thread on the same page.
export function newChat() {
  params.delete('chat');
  location.search = `?${params}`;
}

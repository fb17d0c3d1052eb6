import { useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import AISDKPage from './AISDKPage.jsx';
import AGUIPage from './AGUIPage.jsx';
import { api, newChat, threadId } from './config.js';
import './styles.css';

// App switches between the two pages on the address's hash: the AI SDK's
// useChat (the default) and AG-UI's HttpAgent, each on the same server.
function App() {
  const [page, setPage] = useState(location.hash === '#agui' ? 'agui' : 'aisdk');
  useEffect(() => {
    const onHash = () => location.reload(); // each page owns its client: start it afresh
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  return (
    <>
      <header>
        <strong>toolnexus</strong>
        <nav>
          <a href="#aisdk" aria-current={page === 'aisdk'} onClick={() => setPage('aisdk')}>AI SDK (useChat)</a>
          <a href="#agui" aria-current={page === 'agui'} onClick={() => setPage('agui')}>AG-UI (HttpAgent)</a>
        </nav>
        <button type="button" className="new" onClick={newChat}>New chat</button>
        <small title={api}>thread {threadId.slice(0, 8)}</small>
      </header>
      <main>{page === 'agui' ? <AGUIPage /> : <AISDKPage />}</main>
    </>
  );
}

// No StrictMode: its doubled effects in development would resume and
// connect twice.
createRoot(document.getElementById('root')).render(<App />);

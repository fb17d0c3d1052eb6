import { api } from './config.js';

// Files shows files a call made (or a user sent), as the server keeps
// them: each with a preview when it is an image, and a download link.
// url is the server's download route, relative to the server
// ("/artifacts/{thread}/{name}?version=N"): the page prefixes the
// server's address. A data: URL (a file the user just attached) is shown
// as it is.
export default function Files({ files }) {
  if (!files.length) return null;
  return (
    <div className="files">
      {files.map((f) => {
        const href = f.url.startsWith('/') ? api + f.url : f.url;
        return (
          <figure key={f.url} className="file" data-name={f.name} data-type={f.mediaType}>
            {/^image\/(png|jpeg|gif|webp)$/.test(f.mediaType) && <img src={href} alt={f.name} />}
            <figcaption>
              <a href={href} download={f.name}>Download {f.name}</a> <span className="type">{f.mediaType}</span>
            </figcaption>
          </figure>
        );
      })}
    </div>
  );
}

// fileName is the name of a file from its URL: its last path segment.
export function fileName(url) {
  return decodeURIComponent(url.split('?')[0].split('/').pop());
}

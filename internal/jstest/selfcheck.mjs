// Loads both clients, to check the install: prints "ok node vX.Y.Z".
import { uiMessageChunkSchema, readUIMessageStream, validateUIMessages } from 'ai';
import { HttpAgent } from '@ag-ui/client';

for (const [name, v] of Object.entries({ uiMessageChunkSchema, readUIMessageStream, validateUIMessages, HttpAgent })) {
  if (!v) throw new Error(`${name} is missing`);
}
console.log(`ok node ${process.version}`);

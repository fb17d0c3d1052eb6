// Loads every client, to check the install: prints "ok node vX.Y.Z".
import { uiMessageChunkSchema, readUIMessageStream, validateUIMessages } from 'ai';
import { HttpAgent } from '@ag-ui/client';
import { ClientFactory } from '@a2a-js/sdk/client';

for (const [name, v] of Object.entries({ uiMessageChunkSchema, readUIMessageStream, validateUIMessages, HttpAgent, ClientFactory })) {
  if (!v) throw new Error(`${name} is missing`);
}
console.log(`ok node ${process.version}`);

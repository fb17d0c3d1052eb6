import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The app calls examples/server on another origin (its -cors flag lets
// it): no proxy, so that a deployment works the same way. The dev server
// listens on 5173, the origin README.md's command allows.
export default defineConfig({
  plugins: [react()],
  server: { port: 5173, strictPort: true },
});

import { defineConfig } from 'vite';

// The dashboard is served by Canvass itself at /app (src/http/routes/dashboard.ts);
// `npm run build` runs `vite build web`, which writes it to web/dist. JSX goes through Vite's own transform: no plugin needed.
export default defineConfig({
  base: '/app/',
  oxc: { jsx: { runtime: 'automatic' } },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false },
  logLevel: 'warn',
});

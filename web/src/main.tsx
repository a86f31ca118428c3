import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
// The base stylesheet first: the pages' own stylesheets, imported by the pages, come after it.
import './styles.css';
import { App } from './App';
import { CrashNote } from './ui/CrashNote';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <CrashNote>
      <App />
    </CrashNote>
  </StrictMode>,
);

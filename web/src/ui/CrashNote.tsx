import { Component, type ErrorInfo, type ReactNode } from 'react';
import { forget } from './session';

type State = { error: Error | null };

/**
 * A page that fails while it draws (an answer of a shape the app does not expect, say) shows
 * what failed, with Reload and Sign out, instead of leaving a blank page.
 */
export class CrashNote extends Component<{ children: ReactNode }, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    console.warn('the dashboard failed to draw a page', error, info.componentStack);
  }

  override render(): ReactNode {
    const { error } = this.state;
    if (!error) return this.props.children;
    return (
      <main className="crash">
        <h1>This page could not be shown</h1>
        <p className="error" role="alert">
          {error.message || String(error)}
        </p>
        <p>
          <button type="button" onClick={() => location.reload()}>
            Reload
          </button>{' '}
          <button
            type="button"
            onClick={() => {
              forget();
              location.assign('/app/');
            }}
          >
            Sign out
          </button>
        </p>
      </main>
    );
  }
}

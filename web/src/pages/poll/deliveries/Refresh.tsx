import { useEffect, useRef, useState } from 'react';

const REFRESH_MS = 5000;

/**
 * A delivery log's refreshing: by hand, or every 5 s while the tab is visible. `tick` counts
 * the refreshes, so an open delivery's detail reloads with its list. A tick while the list's
 * last load is still out (`busy`) is skipped: on a slow server, loads replaced every 5 s would
 * pile up on the browser's connections, and the one left running never show its error.
 */
export function useRefresh(reload: () => void, busy: boolean) {
  const [auto, setAuto] = useState(true);
  const [tick, setTick] = useState(0);
  const loading = useRef(busy);
  loading.current = busy;
  useEffect(() => {
    if (!auto) return;
    const t = setInterval(() => {
      if (document.visibilityState === 'visible' && !loading.current) {
        reload();
        setTick((n) => n + 1);
      }
    }, REFRESH_MS);
    return () => clearInterval(t);
  }, [auto, reload]);
  const refresh = () => {
    reload();
    setTick((n) => n + 1);
  };
  return { auto, setAuto, tick, refresh };
}

/** The auto-refresh switch and the Refresh button, beside a delivery log's heading. */
export function RefreshControls({ refresh: r }: { refresh: ReturnType<typeof useRefresh> }) {
  return (
    <div className="actions">
      <label className="check">
        <input type="checkbox" checked={r.auto} onChange={(e) => r.setAuto(e.target.checked)} /> Refresh every 5 s
      </label>
      <button type="button" onClick={r.refresh}>
        Refresh
      </button>
    </div>
  );
}

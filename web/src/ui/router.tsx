import { useEffect, useState, type MouseEvent, type ReactNode } from 'react';

// A few routes under /app, with the History API (the server answers index.html for /app/*).

export const BASE = '/app';

export type Route =
  | { name: 'polls' }
  | { name: 'poll'; pollId: string; section: PollSection }
  | { name: 'alerts' }
  | { name: 'deliveries' }
  | { name: 'keys' };

export const POLL_SECTIONS = ['overview', 'slides', 'translations', 'responses', 'webhooks', 'deliveries'] as const;
export type PollSection = (typeof POLL_SECTIONS)[number];

export function parse(pathname: string): Route {
  const parts = pathname
    .replace(/^\/app\/?/, '')
    .split('/')
    .filter(Boolean)
    .map(decodeURIComponent);
  if (parts[0] === 'alerts') return { name: 'alerts' };
  if (parts[0] === 'deliveries') return { name: 'deliveries' };
  if (parts[0] === 'keys') return { name: 'keys' };
  if (parts[0] === 'polls' && parts[1]) {
    const section = (POLL_SECTIONS as readonly string[]).includes(parts[2] ?? '')
      ? (parts[2] as PollSection)
      : 'overview';
    return { name: 'poll', pollId: parts[1], section };
  }
  return { name: 'polls' };
}

export function href(route: Route): string {
  switch (route.name) {
    case 'polls':
      return `${BASE}/`;
    case 'alerts':
      return `${BASE}/alerts`;
    case 'deliveries':
      return `${BASE}/deliveries`;
    case 'keys':
      return `${BASE}/keys`;
    case 'poll':
      return `${BASE}/polls/${encodeURIComponent(route.pollId)}${route.section === 'overview' ? '' : `/${route.section}`}`;
  }
}

const CHANGE = 'canvass:navigate';

export function navigate(to: string): void {
  if (to === location.pathname) return;
  history.pushState(null, '', to);
  window.dispatchEvent(new Event(CHANGE));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parse(location.pathname));
    window.addEventListener('popstate', update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  return route;
}

/** An ordinary link (keyboard, middle click, copy address all work) that navigates in place. */
export function Link({
  to,
  children,
  current,
  className,
}: {
  to: Route;
  children: ReactNode;
  current?: boolean;
  className?: string;
}) {
  const target = href(to);
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(target);
  };
  return (
    <a href={target} onClick={onClick} aria-current={current ? 'page' : undefined} className={className}>
      {children}
    </a>
  );
}

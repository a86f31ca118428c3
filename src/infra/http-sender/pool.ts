import type tls from 'node:tls';
import type { Answering, Attempt as AnyAttempt } from './attempt.js';
import type { OriginQueue } from './origin-queue.js';
import type { ResponseParser } from './response-parser.js';

/** The sender's connections and origins (h1-sender.ts). */
export type Attempt = AnyAttempt<Conn>;

export type Conn = Answering & {
  socket: tls.TLSSocket;
  origin: Origin;
  ready: boolean;
  current: Attempt | null;
  parser: ResponseParser | null;
  /** Requests this connection has answered: a reused one may have been closed by the server. */
  served: number;
  idleUntil: number;
  error: unknown;
  /** Destroyed, its close not yet seen: no longer counted against the bound. */
  dropped: boolean;
  /** When it began to open (performance.now()). */
  openedAt: number;
};

export type Origin = {
  key: string;
  host: string;
  port: number;
  servername: string | undefined;
  /** The deadline of the origin's latest attempt: also how long a connection may take to open. */
  timeoutMs: number;
  conns: Set<Conn>;
  /** Ready connections with nothing to do, most recently used last. */
  idle: Conn[];
  queue: OriginQueue<Attempt>;
  connecting: number;
  /** Connections destroyed whose close is not yet seen (they are still in conns). */
  dropped: number;
};

import net from 'node:net';

type Pending = { head: string; body: string; resolve(status: number): void; reject(e: Error): void };

/**
 * The pipeline's respondents: POSTs over up to `connections` keep-alive sockets to one
 * `http://host:port`, one request at a time per socket, answered with the status code. It
 * reads only what it needs of each answer (the status line, Content-Length, the body's length),
 * so that the load costs the two cores as little as it can beside the service it measures.
 * A request waits for a free socket when all are busy; an answer it cannot read (no
 * Content-Length, a closed socket) fails that request.
 */
export class LoadClient {
  #idle: Conn[] = [];
  #open = 0;
  #waiting: Pending[] = [];
  #all = new Set<Conn>();

  constructor(
    private readonly base: URL,
    private readonly connections: number,
  ) {}

  post(path: string, json: string): Promise<number> {
    const head =
      `POST ${path} HTTP/1.1\r\nHost: ${this.base.host}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n`;
    return new Promise((resolve, reject) => {
      const p: Pending = { head, body: json, resolve, reject };
      const conn = this.#idle.pop() ?? (this.#open < this.connections ? this.#connect() : undefined);
      if (conn) conn.send(p);
      else this.#waiting.push(p);
    });
  }

  close(): void {
    for (const c of this.#all) c.socket.destroy();
  }

  #connect(): Conn {
    this.#open++;
    const conn = new Conn(net.connect(Number(this.base.port), this.base.hostname), (c, ok) => {
      if (!ok) {
        // A socket the server closed while idle is dropped from the idle list too.
        const idle = this.#idle.indexOf(c);
        if (idle >= 0) this.#idle.splice(idle, 1);
        this.#all.delete(c);
        this.#open--;
        const next = this.#waiting.shift();
        if (next) this.#connect().send(next);
        return;
      }
      const next = this.#waiting.shift();
      if (next) c.send(next);
      else this.#idle.push(c);
    });
    conn.socket.setNoDelay(true);
    this.#all.add(conn);
    return conn;
  }
}

class Conn {
  #current: Pending | undefined;
  #buf = '';
  #status = 0;
  #bodyAt = -1;
  #length = 0;

  constructor(
    readonly socket: net.Socket,
    private readonly done: (c: Conn, ok: boolean) => void,
  ) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => this.#read(chunk));
    let failed = false;
    const fail = (e?: Error) => {
      if (failed) return;
      failed = true;
      const p = this.#current;
      this.#current = undefined;
      p?.reject(e ?? new Error('the connection closed before the answer'));
      this.done(this, false);
    };
    socket.on('error', fail);
    socket.on('close', () => fail());
  }

  send(p: Pending): void {
    this.#current = p;
    this.socket.write(p.head + p.body);
  }

  #read(chunk: string): void {
    this.#buf += chunk;
    if (this.#bodyAt < 0) {
      const end = this.#buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      this.#status = Number(this.#buf.slice(9, 12));
      const m = /\r\ncontent-length: *(\d+)/i.exec(this.#buf.slice(0, end));
      if (!m) return void this.socket.destroy(new Error('an answer without Content-Length'));
      this.#length = Number(m[1]);
      this.#bodyAt = end + 4;
    }
    if (this.#buf.length < this.#bodyAt + this.#length) return;
    const p = this.#current!;
    this.#current = undefined;
    this.#buf = this.#buf.slice(this.#bodyAt + this.#length);
    this.#bodyAt = -1;
    p.resolve(this.#status);
    this.done(this, true);
  }
}

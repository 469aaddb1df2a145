/** The demo's embedded store: PostgreSQL in WASM (PGlite), served to the instances on a local port. */
export interface EmbeddedPostgres {
  /** A `postgres://` URL for `pg`, on 127.0.0.1 and a free port. */
  readonly url: string;
  /** Stops serving and closes the database, which lived in memory only. */
  stop(): Promise<void>;
}

/**
 * PGlite is one backend: its socket server queues every connection's statements on it, a transaction at a time.
 * Each instance's pool opens up to 3 connections, so 20 leaves room for reconnects.
 */
const MAX_CONNECTIONS = 20;

/** Starts PGlite in this process and serves it on a free port. Loaded on demand: Redis runs never need it. */
export async function startEmbeddedPostgres(): Promise<EmbeddedPostgres> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const db = await PGlite.create();
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: MAX_CONNECTIONS });
  try {
    await server.start();
  } catch (error) {
    await db.close();
    throw error;
  }
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}

/** The `NODE_ENV` values (trimmed, any case) of a developer machine: any other counts as production. */
const DEVELOPER_NODE_ENVS = ['', 'development', 'test'];

/**
 * `NODE_ENV` (trimmed) when it counts as production, else `undefined`. Read again each time: an app may set
 * it after `forRoot()` ran (`dotenv` in `bootstrap()`).
 */
export function productionNodeEnv(environment: NodeJS.ProcessEnv): string | undefined {
  const nodeEnv = (environment.NODE_ENV ?? '').trim();
  return DEVELOPER_NODE_ENVS.includes(nodeEnv.toLowerCase()) ? undefined : nodeEnv;
}

/**
 * The kinds of app a user installs the package into. Each is a directory of test/package/fixtures/
 * (its package.json and tsconfig.json) plus the app's code, fixtures/app/src, which all shapes share (a file of
 * the shape's own src/ replaces the shared one); a shape may add the plain-JavaScript app,
 * fixtures/plain-js/main.js, as one more instance.
 */
export interface AppShape {
  /** Its fixture directory, and its name in the output. */
  name: string;
  /** What kind of app it is, for the output. */
  description: string;
  /** The compiled TypeScript app is started this many times. */
  typeScriptInstances: number;
  /** Whether the plain-JavaScript CommonJS app (`require('nest-scheduler-lock')`) runs beside them. */
  plainJavaScriptInstance: boolean;
  /** Where its locks live: the shared Redis (the `redis` option), or a schema of the shared PostgreSQL. */
  store: 'redis' | 'postgres';
}

export const APP_SHAPES: AppShape[] = [
  {
    name: 'nest12-esm',
    description: 'Nest 12 ESM app ("type": "module", tsconfig module nodenext)',
    typeScriptInstances: 2,
    plainJavaScriptInstance: false,
    store: 'redis',
  },
  {
    name: 'nest12-cjs',
    description: 'Nest 12 CommonJS app (no "type", tsconfig module nodenext, the lowest TypeScript that allows it)',
    typeScriptInstances: 2,
    plainJavaScriptInstance: false,
    store: 'redis',
  },
  {
    name: 'nest11-cjs',
    description: 'Nest 11 CommonJS app (tsconfig module commonjs) with @nestjs/schedule 6 and ioredis 5, plus plain JS',
    typeScriptInstances: 2,
    plainJavaScriptInstance: true,
    store: 'redis',
  },
  {
    name: 'postgres-only',
    // skipLibCheck, as `nest new` sets it: the module's `redis` option names ioredis's types, unresolved here.
    description: 'Nest 12 CommonJS app on PostgreSQL alone: pg installed, no ioredis in node_modules (skipLibCheck)',
    typeScriptInstances: 2,
    plainJavaScriptInstance: false,
    store: 'postgres',
  },
];

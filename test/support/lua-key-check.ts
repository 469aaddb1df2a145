import luaparse from 'luaparse';
import type { Redis } from 'ioredis';

/**
 * Where a Redis command keeps its keys, as `COMMAND INFO` gives them: the first and last argument that is a
 * key (the command's name is argument 0; a negative last counts from the end) and the step between keys.
 * `movable` commands (a key count among their arguments) have keys this check cannot place.
 */
export interface KeyPositions {
  readonly first: number;
  readonly last: number;
  readonly step: number;
  readonly movable: boolean;
}

export type KeyPositionsOf = (command: string) => Promise<KeyPositions>;

/** A `redis.call` / `redis.pcall` whose key may not come from `KEYS`, with its line and why. */
export interface UndeclaredKey {
  /** The line in the script with its includes in place, and its text. */
  readonly line: number;
  readonly text: string;
  readonly reason: string;
}

/** The key positions of every command, read from the server itself (`COMMAND INFO`), once per command. */
export function serverKeyPositions(client: Redis): KeyPositionsOf {
  const known = new Map<string, Promise<KeyPositions>>();
  return (command) => {
    const name = command.toLowerCase();
    let positions = known.get(name);
    if (!positions) {
      positions = (client.command('INFO', name) as Promise<unknown[][]>).then(([info]) => {
        if (!info) throw new Error(`Redis does not know the command ${command}`);
        const [, , flags, first, last, step] = info as [string, number, string[], number, number, number];
        return { first, last, step, movable: flags.includes('movablekeys') };
      });
      known.set(name, positions);
    }
    return positions;
  };
}

type Node = luaparse.Node;
type Expression = luaparse.Expression;
/** Where a name gets a value: an expression, or `unknown` (a loop counter, a vararg, a value from elsewhere). */
type Binding = Expression | 'unknown';

const isIdentifier = (node: Node | undefined, name?: string): node is luaparse.Identifier =>
  node?.type === 'Identifier' && (name === undefined || node.name === name);
/** `KEYS` spread whole: `unpack(KEYS)`, `table.unpack(KEYS)`, `ipairs(KEYS)`, `pairs(KEYS)`. */
const isKeysCall = (node: Node | undefined, ...functions: string[]): boolean =>
  node?.type === 'CallExpression' &&
  isIdentifier(node.arguments[0], 'KEYS') &&
  node.arguments.length === 1 &&
  ((isIdentifier(node.base) && functions.includes(node.base.name)) ||
    (node.base.type === 'MemberExpression' && functions.includes(node.base.identifier.name)));
const isRedisCall = (node: Node): node is luaparse.CallExpression =>
  node.type === 'CallExpression' &&
  node.base.type === 'MemberExpression' &&
  isIdentifier(node.base.base, 'redis') &&
  ['call', 'pcall'].includes(node.base.identifier.name);

/** Every node of the tree, parents first. */
function* nodes(node: unknown): Generator<Node> {
  if (Array.isArray(node)) {
    for (const child of node) yield* nodes(child);
  } else if (node && typeof node === 'object' && typeof (node as { type?: unknown }).type === 'string') {
    yield node as Node;
    for (const [field, child] of Object.entries(node)) if (field !== 'loc') yield* nodes(child);
  }
}

/**
 * Every place a name gets a value in the script. Names are taken script-wide, not per scope: a name bound
 * once to something else than a key in any scope counts as no key anywhere, so the check can only err by
 * refusing a script, never by passing one. A local function's parameter is bound by each of its calls.
 */
function bindingsOf(chunk: luaparse.Chunk): Map<string, Binding[]> {
  const bindings = new Map<string, Binding[]>();
  const bind = (name: string, binding: Binding) => bindings.set(name, [...(bindings.get(name) ?? []), binding]);
  const functions = new Map<string, luaparse.FunctionDeclaration>();
  const bindList = (targets: Node[], values: Expression[]) =>
    targets.forEach((target, i) => {
      if (!isIdentifier(target)) return; // a table field: not tracked, so never a key
      const value = values[i];
      if (value?.type === 'FunctionDeclaration') functions.set(target.name, value);
      // `local x` alone binds nil, which is no key Redis could touch; past the last value of a call: unknown.
      if (value) bind(target.name, value);
      else if (values.length > 0) bind(target.name, 'unknown');
    });
  for (const node of nodes(chunk)) {
    if (node.type === 'LocalStatement' || node.type === 'AssignmentStatement') bindList(node.variables, node.init);
    const declared = node.type === 'FunctionDeclaration' ? node.identifier : null;
    if (node.type === 'FunctionDeclaration' && declared?.type === 'Identifier') functions.set(declared.name, node);
    if (node.type === 'ForNumericStatement') bind(node.variable.name, 'unknown');
    if (node.type === 'ForGenericStatement') {
      const overKeys = node.iterators.length === 1 && isKeysCall(node.iterators[0], 'ipairs', 'pairs');
      node.variables.forEach((variable, i) => bind(variable.name, overKeys && i === 1 ? node.iterators[0] : 'unknown'));
    }
  }
  const calls = [...nodes(chunk)].filter((node): node is luaparse.CallExpression => node.type === 'CallExpression');
  const identifiers = [...nodes(chunk)].filter((node) => node.type === 'Identifier');
  for (const [name, declaration] of functions) {
    const called = calls.filter((call) => isIdentifier(call.base, name));
    // Used otherwise than called by name (handed on as a value): who calls it, with what, is unknown here.
    const declared = identifiers.filter((node) => isIdentifier(node, name)).length - called.length;
    const handedOn = declared > functionDeclarations(chunk, name);
    declaration.parameters.forEach((parameter, index) => {
      if (!isIdentifier(parameter)) return; // `...`: never a name of a redis.call argument
      if (handedOn) bind(parameter.name, 'unknown');
      for (const call of called) bind(parameter.name, call.arguments[index] ?? 'unknown');
    });
  }
  return bindings;
}

/** How many times `name` is declared as a function (`local function name`, `local name = function`). */
function functionDeclarations(chunk: luaparse.Chunk, name: string): number {
  let count = 0;
  for (const node of nodes(chunk)) {
    if (node.type === 'FunctionDeclaration' && isIdentifier(node.identifier ?? undefined, name)) count++;
    if (node.type === 'LocalStatement' || node.type === 'AssignmentStatement') {
      count += node.variables.filter(
        (v, i) => isIdentifier(v, name) && node.init[i]?.type === 'FunctionDeclaration',
      ).length;
    }
  }
  return count;
}

/**
 * The names that hold a key whatever path the script takes: every value they are given is a key, by the
 * largest fixed point (names are assumed keys, then dropped while one of their values is not).
 */
function keyNames(bindings: Map<string, Binding[]>): Set<string> {
  const names = new Set(bindings.keys());
  let changed = true;
  while (changed) {
    changed = false;
    for (const name of names) {
      if (bindings.get(name)!.some((binding) => binding === 'unknown' || !isKey(binding, names))) {
        names.delete(name);
        changed = true;
      }
    }
  }
  return names;
}

/** `KEYS[i]`, a name that only ever holds a key, or `KEYS` iterated whole. */
function isKey(expression: Expression, names: ReadonlySet<string>): boolean {
  if (expression.type === 'IndexExpression') return isIdentifier(expression.base, 'KEYS');
  if (expression.type === 'Identifier') return expression.name !== 'KEYS' && names.has(expression.name);
  return isKeysCall(expression, 'ipairs', 'pairs');
}

/**
 * The `redis.call` / `redis.pcall` calls of `source` (a script with its includes in place) that may touch a
 * key not declared in `KEYS`: a key argument that is not `KEYS[i]` (or a local only ever given such a
 * value, also through a local function's parameters), a command not named by a string literal, or one whose
 * keys cannot be placed. Lines are those of `source`.
 */
export async function undeclaredKeys(source: string, positionsOf: KeyPositionsOf): Promise<UndeclaredKey[]> {
  const chunk = luaparse.parse(source, { luaVersion: '5.1', locations: true, encodingMode: 'x-user-defined' });
  const names = keyNames(bindingsOf(chunk));
  const found: UndeclaredKey[] = [];
  const lines = source.split('\n');
  for (const call of [...nodes(chunk)].filter(isRedisCall)) {
    const line = call.loc!.start.line;
    const text = lines[line - 1].trim();
    const [command, ...rest] = call.arguments;
    if (command?.type !== 'StringLiteral') {
      found.push({ line, text, reason: 'the command is not named by a string literal, so its keys cannot be placed' });
      continue;
    }
    const name = command.raw.slice(1, -1);
    const { first, last, step, movable } = await positionsOf(name);
    if (movable) {
      found.push({ line, text, reason: `${name} takes a key count, so its keys cannot be placed` });
      continue;
    }
    if (first === 0) continue;
    const spread = rest.at(-1)?.type === 'CallExpression' ? rest.at(-1) : undefined;
    const end = last < 0 ? call.arguments.length + last : Math.min(last, call.arguments.length - 1);
    for (let position = first; position <= end; position += step) {
      const argument = call.arguments[position];
      if (argument === spread && isKeysCall(argument, 'unpack')) continue;
      if (!isKey(argument, names)) {
        found.push({ line, text, reason: `${name}'s key (argument ${position}) does not come from KEYS` });
      }
    }
  }
  return found;
}

import { closestOption } from '../../lib/core/provider/closest-option.js';
import { quoted, withoutCredentials } from '../../lib/core/provider/message-text.js';

describe('quoted', () => {
  it.each<[string, unknown, string]>([
    ['NaN as written, not as null', NaN, 'NaN'],
    ['Infinity as written', -Infinity, '-Infinity'],
    ['a BigInt, without throwing', 10n, '10n'],
    ['a string as JSON', 'x"; DROP TABLE y', '"x\\"; DROP TABLE y"'],
    ['a URL without its password', 'postgres://app:s3cret@db/jobs', '"postgres://app:***@db/jobs"'],
    ['a URL inside an object without its password', { url: 'redis://:s3cret@cache' }, '{"url":"redis://:***@cache"}'],
    ['undefined by its type', undefined, 'undefined'],
  ])('prints %s', (_, value, printed) => {
    expect(quoted(value)).toBe(printed);
  });

  it('prints a value JSON cannot, without throwing', () => {
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    expect(quoted(cyclic)).toBe('an unprintable object');
  });
});

describe('withoutCredentials', () => {
  it.each<[string, string]>([
    ['redis://app:s3cret@cache:6379', 'redis://app:***@cache:6379'],
    ['rediss://:s3cret@cache', 'rediss://:***@cache'],
    ['postgres://app:p%40ss@db/jobs', 'postgres://app:***@db/jobs'],
    ['redis://cache:6379', 'redis://cache:6379'],
    ['not a url: s3cret@x', 'not%20a%20url:***@x'],
    ['ops:s3cret@devbox', 'ops:***@devbox'],
  ])('masks %s as %s', (text, masked) => {
    expect(withoutCredentials(text)).toBe(masked);
  });
});

describe('closestOption', () => {
  const known = ['keyPrefix', 'node', 'historyLimit', 'statementTimeout'];

  it.each<[string, string | undefined]>([
    ['keyprefix', 'keyPrefix'],
    ['history', 'historyLimit'],
    ['histroyLimit', 'historyLimit'],
    ['statementTimout', 'statementTimeout'],
    ['nodee', 'node'],
    ['xyz', undefined],
    ['ndoe', 'node'],
    ['timeout', undefined],
  ])('reads %s as %s', (key, meant) => {
    expect(closestOption(key, known)).toBe(meant);
  });
});

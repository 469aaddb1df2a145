import {
  FORCE_UNLOCK_TAG,
  forceUnlockMarker,
  OwnerValues,
  readOwnerValue,
} from '../../lib/core/provider/owner-value.js';
import { NODE_NAMES } from '../../lib/provider-tests/node-names.js';

describe('owner values (the one encoding of Redis and PostgreSQL)', () => {
  const owners = new OwnerValues();

  it.each(NODE_NAMES.map((name, index) => [index, name]))(
    'reads back node name #%i exactly, and no force-release marker as an owner',
    (_, node) => {
      const before = Date.now();
      const value = owners.next(node);

      expect(readOwnerValue(value)).toEqual({ node, since: expect.any(Number) });
      expect(readOwnerValue(value)!.since).toBeGreaterThanOrEqual(before);
      expect(value.startsWith(FORCE_UNLOCK_TAG)).toBe(false);
      expect(readOwnerValue(forceUnlockMarker(node, before))).toBeUndefined();
    },
  );

  it('gives each acquisition a value of its own, even for one node name', () => {
    const values = Array.from({ length: 1_000 }, () => owners.next('web-1'));

    expect(new Set(values).size).toBe(values.length);
  });
});

/** A generator of numbers in [0, 1), the same sequence for the same seed. */
export type Random = () => number;

/** mulberry32: a small, fast PRNG whose whole state is one 32-bit integer, so a seed replays exactly. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

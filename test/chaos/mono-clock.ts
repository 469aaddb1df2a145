/**
 * The machine's monotonic clock in milliseconds. `process.hrtime.bigint()` reads CLOCK_MONOTONIC, which
 * every process on one machine shares and which libfaketime leaves alone with
 * `FAKETIME_DONT_FAKE_MONOTONIC=1`: the one clock on which the journals of skewed apps, the fault
 * windows and the kill times of the soak can be compared.
 */
export function monoNow(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
